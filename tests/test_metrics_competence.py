"""TruthRL's truthfulness (``truth.*`` in every metric block) and abstention against the base model's competence
(``abstain.metrics.competence``): hand-computed cases, a brute-force parity check, CIs, and what is refused."""

from __future__ import annotations

import random

import pytest

from abstain.metrics import MetricsConfig, compute_metrics
from abstain.metrics.competence import competence_metrics
from abstain.schema import DataError, ScoredRow


def row(i: str, label: str = "answerable", *, declined: bool = False, correct: bool | None = True,
        group: str | None = "easy") -> ScoredRow:
    return ScoredRow(id=i, question=f"q{i}", answers=["1"] if label == "answerable" else [], label=label,
                     response="", model="m", category=group, pred="DATA_UNCERTAIN" if declined else "ANSWER",
                     answer=None if declined else "1", format_ok=True,
                     correct=None if declined or label == "unanswerable" else correct)


def test_truthfulness_counts_every_decided_row_and_an_answer_to_an_unanswerable_item_as_wrong():
    rows = [row("1"), row("2"), row("3", correct=False), row("4", declined=True),
            row("5", "unanswerable"), row("6", "unanswerable", declined=True)]
    m = compute_metrics(rows, MetricsConfig(resamples=200))
    assert (m["truth.acc"], m["truth.hallucination"], m["truth.abstain"]) == (2 / 6, 2 / 6, 2 / 6)
    assert m["truth.truthfulness"] == 0.0
    low, high = m["truth.truthfulness_ci"]
    assert low < 0 < high
    # always abstaining: T = 0 exactly; forced answers mostly wrong: T < 0
    assert compute_metrics([row(str(i), declined=True) for i in range(4)],
                           MetricsConfig(resamples=0))["truth.truthfulness"] == 0.0
    assert compute_metrics([row("1"), row("2", correct=False), row("3", "unanswerable")],
                           MetricsConfig(resamples=0))["truth.truthfulness"] == pytest.approx(-1 / 3)


def _brute(rows, p_hat):
    """The definitions, by loops over rows and pairs."""
    ans = [r for r in rows if r.label == "answerable"]
    dec = {r.id + str(k): r.pred != "ANSWER" for k, r in enumerate(ans)}
    keyed = [(r.id + str(k), r) for k, r in enumerate(ans)]
    over = sum(p_hat[r.id] for key, r in keyed if dec[key]) / sum(p_hat[r.id] for _, r in keyed)
    prud = sum(1 - p_hat[r.id] for key, r in keyed if dec[key]) / sum(1 - p_hat[r.id] for _, r in keyed)
    won = pairs = 0.0
    for key_a, a in keyed:
        for key_b, b in keyed:
            if dec[key_a] and not dec[key_b] and a.category == b.category:
                pairs += 1
                won += 1.0 if p_hat[a.id] < p_hat[b.id] else 0.5 if p_hat[a.id] == p_hat[b.id] else 0.0
    return over, prud, won / pairs


def test_competence_metrics_equal_their_definitions_on_random_rows():
    rng = random.Random(4)
    p_hat = {str(i): rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, rng.random()]) for i in range(40)}
    rows = [row(str(rng.randrange(40)), declined=rng.random() < 0.4, group=rng.choice(["a", "b", "c"]))
            for _ in range(120)] + [row("u", "unanswerable", declined=True)]  # twins carry no p-hat: left out
    m = competence_metrics(rows, p_hat, resamples=0)
    over, prud, auroc = _brute(rows, p_hat)
    assert m["over_conservativeness"] == pytest.approx(over) and m["prudence"] == pytest.approx(prud)
    assert m["auroc_within"] == pytest.approx(auroc)
    assert m["n_rows"] == 120 and m["n_items"] == len({r.id for r in rows if r.label == "answerable"})


def test_declining_a_whole_rung_is_not_abstention_that_follows_competence():
    # easy rung answered, hard rung declined: pooled, declined items have the lower p-hat; within a rung there is
    # no pair to compare, so the within-rung AUROC is undefined; inside the hard rung a coin flip scores 1/2
    p_hat = {"e1": 0.9, "e2": 0.8, "h1": 0.1, "h2": 0.3}
    rows = [row("e1"), row("e2"), row("h1", declined=True, group="hard"), row("h2", declined=True, group="hard")]
    assert competence_metrics(rows, p_hat, resamples=0)["auroc_within"] is None
    same = {"e1": 0.5, "e2": 0.5}
    rows = [row("e1"), row("e2", declined=True)]
    assert competence_metrics(rows, same, resamples=0)["auroc_within"] == 0.5


def test_the_cis_resample_items_and_a_missing_p_hat_is_named():
    rng = random.Random(1)
    p_hat = {str(i): i / 29 for i in range(30)}
    rows = [row(str(i), declined=rng.random() < (1 - i / 29)) for i in range(30) for _ in range(2)]
    first, again = competence_metrics(rows, p_hat, seed=3), competence_metrics(rows, p_hat, seed=3)
    assert first == again
    for key in ("over_conservativeness", "prudence", "auroc_within"):
        low, high = first[f"{key}_ci"]
        assert low <= first[key] <= high and low < high
    with pytest.raises(DataError, match=r"1 answerable item\(s\) have no probed p_hat, e.g. \['zz'\]"):
        competence_metrics([*rows, row("zz")], p_hat)


def test_abstain_metrics_adds_the_competence_metrics_of_a_probe(tmp_path):
    import json

    from typer.testing import CliRunner

    from abstain.cli import app
    from abstain.records.probes import PROBE, ProbeRow
    from abstain.schema import write_jsonl

    p_hat = {"e": 0.9, "m": 0.5, "h": 0.1}
    rows = [row("e"), row("m"), row("h", declined=True), row("t", "unanswerable", declined=True)]
    write_jsonl(tmp_path / "scored.jsonl", rows)
    (tmp_path / "probe").mkdir()
    write_jsonl(tmp_path / "probe" / PROBE, [
        ProbeRow(id=i, question=f"q{i}", answers=["1"], label="answerable", model="bundled", protocol="idk", k=10,
                 n_judged=10, n_correct=round(p * 10), p_hat=p, ook=p == 0, samples=[]) for i, p in p_hat.items()])
    done = CliRunner().invoke(app, ["metrics", "--input", str(tmp_path / "scored.jsonl"), "--probe",
                                    str(tmp_path / "probe"), "--resamples", "50", "--json", str(tmp_path / "m.json")])
    assert done.exit_code == 0, done.output
    saved = json.loads((tmp_path / "m.json").read_text())
    assert saved["competence.over_conservativeness"] == pytest.approx(0.1 / 1.5)
    assert saved["competence.prudence"] == pytest.approx(0.9 / 1.5) and saved["competence.auroc_within"] == 1.0
    assert saved["competence.n_items"] == 3 and "prudence" in done.output
    del p_hat["h"]  # a probe of other items: named, nothing written
    write_jsonl(tmp_path / "probe" / PROBE, [
        ProbeRow(id=i, question=f"q{i}", answers=["1"], label="answerable", model="bundled", protocol="idk", k=10,
                 n_judged=10, n_correct=round(p * 10), p_hat=p, ook=False, samples=[]) for i, p in p_hat.items()])
    done = CliRunner().invoke(app, ["metrics", "--input", str(tmp_path / "scored.jsonl"), "--probe",
                                    str(tmp_path / "probe"), "--json", str(tmp_path / "m2.json")])
    assert done.exit_code != 0 and "no probed p_hat, e.g. ['h']" in " ".join(done.output.split())
    assert not (tmp_path / "m2.json").exists()


def _probe_of(folder, items, p_hats):
    from abstain.records.probes import PROBE, ProbeRow
    from abstain.schema import write_jsonl

    folder.mkdir(exist_ok=True)
    write_jsonl(folder / PROBE, [
        ProbeRow(**item.model_dump(), model="bundled", protocol="idk", k=4, n_judged=4, n_correct=round(p * 4),
                 p_hat=p, ook=p == 0, samples=[]) for item, p in zip(items, p_hats, strict=True)])


@pytest.mark.slow
def test_abstain_eval_with_a_probe_reports_the_competence_metrics_and_refuses_one_that_misses_an_item(tmp_path):
    import json

    from typer.testing import CliRunner

    from abstain.cli import app
    from abstain.schema import write_jsonl
    from abstain.synth.ladder import LadderConfig, generate_ladder

    items = list(generate_ladder(LadderConfig(n_per_rung=2, seed=1, split="test", rungs=("add1-bare", "mul3-bare"))))
    write_jsonl(tmp_path / "items.jsonl", items)
    answerable = [i for i in items if i.label == "answerable"]
    _probe_of(tmp_path / "partial", answerable[:-1], [0.5] * 3)
    args = ["eval", "--model", "bundled", "--data", str(tmp_path / "items.jsonl"), "--protocol", "idk",
            "--max-tokens", "8", "--resamples", "20"]
    done = CliRunner().invoke(app, [*args, "--probe", str(tmp_path / "partial"), "--out", str(tmp_path / "refused")])
    assert done.exit_code != 0 and "1 answerable item(s) have no probed p_hat" in " ".join(done.output.split())
    assert not (tmp_path / "refused").exists()  # said before the run folder was written or a model loaded
    _probe_of(tmp_path / "probe", answerable, [1.0, 0.75, 0.0, 0.25])
    done = CliRunner().invoke(app, [*args, "--probe", str(tmp_path / "probe"), "--out", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())["protocols"]["idk"]
    assert metrics["competence.n_items"] == 4 and metrics["competence.n_rows"] == 4
    assert {"competence.over_conservativeness", "competence.prudence", "competence.auroc_within",
            "truth.truthfulness"} <= set(metrics)
    record = json.loads((tmp_path / "run" / "config.json").read_text())
    assert record["probe"] == str(tmp_path / "probe") and "--probe" in record["command"]
