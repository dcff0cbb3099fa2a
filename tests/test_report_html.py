"""The generated report.html, parsed back: every table rectangular, every value under the protocol it belongs to.

The run: real items of the shipped benchmarks (BBQ, MediQ twins, UMWP twins, CoCoNot, SelfAware) with
hand-written responses, scored by the rule judge, under two protocols that behave very differently
("attribution" answers right and says DATA_UNCERTAIN on unanswerable items, "idk" refuses answerable
items and answers unanswerable ones), so a value shifted into the neighbouring column cannot match.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from abstain.data import dataset_of, load_benchmark
from abstain.judges import RuleJudge
from abstain.report import run_metrics, write_report
from abstain.runs import RunDir, write_json
from abstain.schema import ResponseRow
from abstain.scoring import score_rows


class _Tables(HTMLParser):
    """Each <table>: the <h3> before it, its header cells and its body rows (cell texts)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self.title = ""
        self._in: str | None = None
        self._text = ""
        self._row: list[str] | None = None
        self._part = ""

    def handle_starttag(self, tag, attrs):
        if tag == "h3":
            self._in, self._text = "h3", ""
        elif tag == "table":
            self.tables.append({"title": self.title, "header": [], "rows": []})
        elif tag in ("thead", "tbody"):
            self._part = tag
        elif tag == "tr":
            self._row = []
        elif tag in ("th", "td"):
            self._in, self._text = "cell", ""

    def handle_endtag(self, tag):
        if tag == "h3":
            self.title, self._in = self._text.strip(), None
        elif tag in ("th", "td") and self._row is not None:
            self._row.append(" ".join(self._text.split()))
            self._in = None
        elif tag == "tr" and self._row is not None:
            table = self.tables[-1]
            if self._part == "thead":
                table["header"] = self._row
            else:
                table["rows"].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._in:
            self._text += data


def _fmt(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{value:.3f}"


def _first(name: str, label: str, k: int):
    return [i for i in load_benchmark(name) if i.label == label][:k]


def _items():
    umwp = load_benchmark("umwp")
    return [*_first("bbq", "answerable", 3), *_first("bbq", "unanswerable", 3), *load_benchmark("mediq")[:4],
            umwp[0], umwp[2600], umwp[1], umwp[2601],
            *[i for i in load_benchmark("coconot") if dataset_of(i) == "coconot/unknowns"][:2],
            *_first("selfaware", "answerable", 2)]


def _response(item, protocol: str, n: int) -> str:
    if protocol == "attribution":  # right answers (one wrong), DATA_UNCERTAIN on every unanswerable item
        if item.label == "unanswerable":
            return "The question leaves out what is needed. \\boxed{<DATA_UNCERTAIN>}"
        return "\\boxed{0}" if n == 0 else f"So the answer is \\boxed{{{item.answers[0]}}}"
    if item.label == "unanswerable":  # idk: answers unanswerable items, refuses half the answerable ones
        return "\\boxed{42}"
    return "\\boxed{I don't know.}" if n % 2 else f"\\boxed{{{item.answers[0]}}}"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    items = _items()
    rows = [ResponseRow(**item.model_dump(), response=_response(item, p, n), model="hand-written", protocol=p)
            for p in ("attribution", "idk") for n, item in enumerate(items)]
    scored = list(score_rows(rows, RuleJudge()))
    record = {"model": "hand-written", "suite": None, "data": "test", "protocols": ["attribution", "idk"],
              "items": {"count": len(items)}, "judge": "rule", "resamples": 50, "command": "abstain eval ..."}
    path = tmp_path_factory.mktemp("report") / "run"
    RunDir(path).prepare(record)
    metrics = run_metrics(scored, record)
    write_json(path / "metrics.json", metrics)
    parser = _Tables()
    parser.feed(write_report(path).read_text(encoding="utf-8"))
    return parser.tables, metrics, items


def test_every_table_header_matches_its_body(report):
    tables, _, _ = report
    assert len(tables) > 15
    for table in tables:
        assert table["rows"], table["title"]
        for row in table["rows"]:
            assert len(row) == len(table["header"]), (table["title"], table["header"], row)


def _check_metric_rows(table, lookup) -> int:
    """Compare every value cell with ``lookup(protocol, row name)``; returns how many cells were checked."""
    header = table["header"]
    checked = 0
    for row in table["rows"]:
        for protocol, cell in zip(header[1:], row[1:], strict=True):
            assert cell.split(" ")[0] == _fmt(lookup(protocol, row[0])), (table["title"], row[0], protocol, cell)
            checked += 1
    return checked


def test_each_value_sits_under_the_protocol_it_belongs_to(report):
    tables, metrics, _ = report
    proto, by_ds = metrics["protocols"], metrics["by_benchmark"]
    differ = [k for k in ("ua.acc", "ua.du_f1", "r1.a_fu", "r1.u_ref", "ab.f1", "ab.precision")
              if proto["attribution"][k] != proto["idk"][k]]
    assert len(differ) == 6  # the two protocols are distinguishable on every headline key
    checked = 0
    for table in tables:
        title, header = table["title"], table["header"]
        if title in ("Run",):
            continue
        if title.endswith(" metrics") or title in ("Counts", "Discrimination and the numeral-count shortcut"):
            assert header[0] == "metric" and header[1:] == ["attribution", "idk"]
            checked += _check_metric_rows(table, lambda p, key: proto[p][key])
        elif title.startswith("Category: "):
            prefix = f"by_category.{title.removeprefix('Category: ')}."
            checked += _check_metric_rows(table, lambda p, key, prefix=prefix: proto[p][prefix + key])
        elif title == "Decisions and behaviors (row counts)":
            dist = metrics["distribution"]
            checked += _check_metric_rows(
                table, lambda p, name: dist[p][name.split(": ")[0]][name.split(": ")[1]])
        elif title == "Datasets":
            assert header[:3] == ["dataset", "category", "scenario"]
            assert header[3:] == ["items · attribution", "items · idk"]
            for row in table["rows"]:
                for protocol, cell in zip(("attribution", "idk"), row[3:], strict=True):
                    m = by_ds[protocol][row[0]]
                    assert cell == f"{m['n.answerable']} / {m['n.unanswerable']}"
                    checked += 1
                assert row[1] == metrics["datasets"][row[0]]["category"]
        elif "per dataset (" in title or "per knowledge dataset" in title or "per perturbation" in title:
            key = re.search(r"\((\S+)\)$", title).group(1) if "(" in title else title.split(" per ")[0]
            assert header[0] in ("dataset", "perturbation") and header[1:] == ["attribution", "idk"]

            def lookup(p, name, key=key, title=title):
                if name == "all":
                    return proto[p][key]
                if name.startswith("pooled"):
                    return proto[p][("by_category.knowledge." if "knowledge" in name else "") + key]
                if name.startswith("macro"):
                    return proto[p][key.replace("ab.", "ab.macro.")]
                if "per perturbation" in title:
                    return proto[p][f"aca.by_perturbation.{name}.{key.split('.', 1)[1]}"]
                return by_ds[p][name][key]

            checked += _check_metric_rows(table, lookup)
        else:
            raise AssertionError(f"a table this test does not know: {title}")
    assert checked > 200


def test_per_dataset_and_knowledge_sections(report):
    tables, metrics, items = report
    titles = [t["title"] for t in tables]
    datasets = next(t for t in tables if t["title"] == "Datasets")
    assert [r[0] for r in datasets["rows"]] == sorted({dataset_of(i) for i in items})
    assert {r[0]: r[2] for r in datasets["rows"]}["coconot/unknowns"] == "answer_unknown"
    knowledge = [t for t in tables if "per knowledge dataset" in t["title"]]
    assert [t["title"] for t in knowledge] == [f"{k} per knowledge dataset" for k in
                                              ("ab.f1", "ab.precision", "ab.recall", "ab.accuracy", "r1.a_fu")]
    names = {r[0] for r in knowledge[0]["rows"]}
    assert "umwp" not in names and {"bbq", "mediq", "selfaware"} <= names  # knowledge datasets only
    assert knowledge[0]["rows"][-1][0] == "pooled: all knowledge rows"
    acc = next(t for t in tables if t["title"].startswith("Accuracy on answerable items per dataset"))
    assert "coconot/unknowns" not in {r[0] for r in acc["rows"]}  # no answerable rows: no 0.000 row
    assert titles.index("Datasets") < titles.index(knowledge[0]["title"])
