"""The generated report.html, parsed back: every table rectangular, every value under the protocol it belongs to;
the page opens with the run's settings and the headline, then only the plots the run defines.

The run: real items of the shipped benchmarks (BBQ, MediQ twins, UMWP twins, CoCoNot, SelfAware) with
hand-written responses, scored by the rule judge, under two protocols that behave very differently
("attribution" answers right and says DATA_UNCERTAIN on unanswerable items, "idk" refuses answerable
items and answers unanswerable ones), so a value shifted into the neighbouring column cannot match.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from abstain.data import dataset_of, load_benchmark
from abstain.records.runs import RunDir, write_json
from abstain.judges import RuleJudge
from abstain.metrics import AB_HEADLINE, HEADLINE
from abstain.report import columns, load_run, run_metrics, write_report
from abstain.report.plots import PLOTS, behavior_plot, f1_plot, refusal_accuracy_plot, tradeoff_plot
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


def write_run(path, items, protocols=("attribution", "idk")):
    """A run directory of the hand-written responses to ``items`` under ``protocols``, its report written;
    returns (metrics, the page)."""
    rows = [ResponseRow(**item.model_dump(), response=_response(item, p, n), model="hand-written", protocol=p)
            for p in protocols for n, item in enumerate(items)]
    scored = list(score_rows(rows, RuleJudge()))
    record = {"model": "hand-written", "suite": None, "data": "test", "protocols": list(protocols),
              "items": {"count": len(items)}, "judge": "rule", "resamples": 50, "command": "abstain eval ..."}
    RunDir(path).prepare(record)
    metrics = run_metrics(scored, record)
    write_json(path / "metrics.json", metrics)
    return metrics, write_report(path).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The run of both protocols on answerable and unanswerable items: (its folder, metrics, page)."""
    path = tmp_path_factory.mktemp("report") / "run"
    metrics, page = write_run(path, _items())
    return path, metrics, page


@pytest.fixture(scope="module")
def report(both):
    _, metrics, page = both
    parser = _Tables()
    parser.feed(page)
    return parser.tables, metrics, _items()


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
        if title.endswith(" metrics") or title in ("Headline", "Counts", "Discrimination and the numeral-count shortcut"):
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


def _before_first_plot(page: str) -> str:
    return page[:page.index("<figure>")] if "<figure>" in page else page


def _width(png: bytes) -> int:
    return int.from_bytes(png[16:20], "big")  # the PNG header's width


def test_the_page_opens_with_settings_and_headline_then_its_plots(report, both):
    tables, metrics, _ = report
    assert [t["title"] for t in tables[:2]] == ["Run", "Headline"]
    # BBQ, MediQ and CoCoNot are AbstentionBench's datasets: its macro F1 and recall end the headline
    assert [row[0] for row in tables[1]["rows"]] == [*HEADLINE, *AB_HEADLINE]
    assert metrics["protocols"]["idk"]["n.abstentionbench"] == 12  # 3 + 3 BBQ, 4 MediQ, 2 CoCoNot (not UMWP, SelfAware)
    page = both[2]
    top = _before_first_plot(page)
    assert top.index("<h3>Run</h3>") < top.index("<h3>Headline</h3>") and "ab.macro.f1" in top
    assert '<span class="ci">' in top  # the headline's values with their CIs
    assert page.count("<figure>") == len(PLOTS) == 4  # both kinds of item, a DU answer: every plot
    assert "undefined" not in page and "no rows" not in page


def test_an_all_answerable_run_shows_only_the_plots_it_defines(tmp_path, both):
    items = [i for i in _items() if i.label == "answerable"]
    metrics, page = write_run(tmp_path / "run", items)
    top = _before_first_plot(page)
    assert top.index("<h3>Run</h3>") < top.index("<h3>Headline</h3>") and "<th>model</th>" in top
    assert "undefined" not in page and "no rows" not in page
    # no unanswerable items: no U-Ref and no DU-F1 (0 by construction), no abstention-vs-accuracy panel
    assert metrics["protocols"]["attribution"]["r1.u_ref"] is None
    assert sorted(p.stem for p in (tmp_path / "run" / "plots").glob("*.png")) == \
        ["behavior_distribution", "refusal_vs_accuracy"]
    assert page.count("<figure>") == 2 and "DU-F1 vs MU-F1" not in page and "U-Ref vs A-FU" not in page
    # one panel each (answerable items; over-refusal vs accuracy) where the run with both kinds has two
    one, two = columns([load_run(tmp_path / "run")]), columns([load_run(both[0])])
    assert _width(behavior_plot(one)) < 0.7 * _width(behavior_plot(two))
    assert _width(refusal_accuracy_plot(one)) < 0.7 * _width(refusal_accuracy_plot(two))
    assert f1_plot(one) is None and tradeoff_plot(one) is None


def test_du_f1_is_plotted_only_for_a_protocol_with_a_du_answer(tmp_path):
    _, page = write_run(tmp_path / "idk", _items(), protocols=("idk",))
    cols = columns([load_run(tmp_path / "idk")])
    assert cols[0].metrics["ua.du_f1"] == 0.0  # UA-Bench's code: 0, though idk offers no DATA_UNCERTAIN
    assert f1_plot(cols) is None and "DU-F1 vs MU-F1" not in page
    assert page.count("<figure>") == 3  # the other three are defined
    _, page = write_run(tmp_path / "attribution", _items(), protocols=("attribution",))
    assert "DU-F1 vs MU-F1" in page and page.count("<figure>") == 4


def test_a_run_without_abstentionbench_items_has_no_macro_in_its_headline(tmp_path):
    items = [i for i in _items() if dataset_of(i) in ("umwp", "selfaware")]
    metrics, page = write_run(tmp_path / "run", items)
    assert metrics["protocols"]["idk"]["n.abstentionbench"] == 0
    parser = _Tables()
    parser.feed(page)
    headline = next(t for t in parser.tables if t["title"] == "Headline")
    assert [row[0] for row in headline["rows"]] == list(HEADLINE)
    assert "ab.macro" not in _before_first_plot(page)


#: headless Chromium without anything that reaches the network or a display (Debian's package is ``chromium``)
BROWSER_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync")


def _chromium() -> str:
    """The Chromium here; the test skips without one unless ``ABSTAIN_REQUIRE_BROWSER=1`` demands it."""
    found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    if found is None:
        if os.environ.get("ABSTAIN_REQUIRE_BROWSER") == "1":
            raise RuntimeError("no Chromium but ABSTAIN_REQUIRE_BROWSER=1: apt-get install -y chromium")
        pytest.skip("no Chromium here (apt-get install -y chromium; ABSTAIN_REQUIRE_BROWSER=1 makes this an error)")
    return found


class _Order(HTMLParser):
    """The order of the first <table> and the first <img> of a page, and its visible text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("table", "img"):
            self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_report_html_renders_in_a_browser_settings_and_headline_first(tmp_path):
    browser = _chromium()
    metrics, _ = write_run(tmp_path / "run", [i for i in _items() if i.label == "answerable"])
    url = (tmp_path / "run" / "report.html").resolve().as_uri()
    shot = tmp_path / "report.png"
    run = [browser, *BROWSER_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,1600"]
    done = subprocess.run([*run, f"--screenshot={shot}", url], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and (_width(png), int.from_bytes(png[20:24], "big")) == (1200, 1600)
    import io

    from matplotlib.image import imread

    pixels = imread(io.BytesIO(png))[:, :, :3]
    assert (pixels[:800] < 0.5).any(axis=2).mean() > 0.01  # the top of the page holds text, not a blank

    dom = subprocess.run([*run, "--dump-dom", url], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0 and "<table" in dom.stdout, dom.stderr[-2000:]
    order = _Order()
    order.feed(dom.stdout)
    assert order.tags[:2] == ["table", "table"] and order.tags.count("img") == 2  # settings, headline, then plots
    text = " ".join(" ".join(order.text).split())
    assert text.index("Run") < text.index("Headline") < text.index("Plots")
    assert "undefined" not in text and "no rows" not in text
    assert f"{metrics['protocols']['idk']['ua.acc']:.3f}" in text
