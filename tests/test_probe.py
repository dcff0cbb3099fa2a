"""Knowledge-boundary probing (the bundled model, k samples per item) and the R-Tuning / RFT / DPO
builders on a probe file built by hand, with hand-checked expected output."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.data.guard import overlaps
from abstain.records.probes import ProbeRow, ProbeSample, aggregate, read_probe
from abstain.probing.run import ProbeConfig, run_probe
from abstain.schema import DataError, ScoredRow, write_jsonl
from abstain.train.data.probe_data import DPORow, ProbeDataConfig, dpo_rows, rft_rows, rtuning_rows
from abstain.train.data.sft_data import SFTRow

MU, DU = "\\boxed{<MODEL_UNCERTAIN>}", "\\boxed{<DATA_UNCERTAIN>}"


def _s(n: int, response: str, pred: str = "ANSWER", correct: bool | None = False, format_ok: bool = True,
       error: str | None = None) -> ProbeSample:
    return ProbeSample(sample=n, response=response, pred=pred, correct=correct, format_ok=format_ok, judge_error=error)


def _row(id: str, label: str, answers: list[str], samples: list[ProbeSample]) -> ProbeRow:
    judged = [s for s in samples if s.judge_error is None]
    n = sum(s.correct is True for s in judged)
    return ProbeRow(id=id, question=f"question {id}?", answers=answers, label=label, model="m",
                    protocol="attribution", k=len(samples), n_judged=len(judged), n_correct=n,
                    p_hat=n / len(judged) if judged else None, ook=(n == 0) if judged else None, samples=samples)


@pytest.fixture
def probe_rows() -> list[ProbeRow]:
    return [
        _row("known", "answerable", ["4"], [_s(0, "It is \\boxed{4}", correct=True), _s(1, "\\boxed{5}")]),
        _row("ook", "answerable", ["12"], [_s(0, "no box at all", format_ok=False), _s(1, "\\boxed{13}")]),
        _row("unans", "unanswerable", [], [_s(0, "\\boxed{7}"), _s(1, DU, pred="DATA_UNCERTAIN", correct=None)]),
        _row("undecided", "answerable", ["1"], [_s(0, "\\boxed{1}", correct=None, error="judge down")]),
    ]


def test_aggregate_counts_p_hat_and_out_of_knowledge():
    base = dict(question="q", answers=["4"], label="answerable", model="m", protocol="idk", answer=None,
                format_ok=True)
    rows = [ScoredRow(**base, id="a", sample=s, response=r, pred="ANSWER", correct=c)
            for s, r, c in ((2, "\\boxed{4}", True), (0, "\\boxed{3}", False), (1, "\\boxed{4}", True))]
    rows.append(ScoredRow(**base, id="a", sample=3, response="x", pred="ANSWER", correct=None, judge_error="boom"))
    rows.append(ScoredRow(**base, id="b", sample=0, response=MU, pred="MODEL_UNCERTAIN", correct=None))
    a, b = aggregate(rows)
    assert (a.k, a.n_judged, a.n_correct, a.p_hat, a.ook) == (4, 3, 2, 2 / 3, False)
    assert [s.sample for s in a.samples] == [0, 1, 2, 3]
    assert (b.k, b.n_correct, b.p_hat, b.ook) == (1, 0, 0.0, True)  # a refusal is not a correct answer


def test_rtuning(probe_rows):
    built = rtuning_rows(probe_rows)
    got = {r.id: (r.target_kind, r.completion[0]["content"]) for r in built.rows}
    assert got == {"known": ("sample", "It is \\boxed{4}"), "ook": ("idk", MU), "unans": ("idk", DU)}
    assert built.dropped == [("undecided", "no sample could be judged")]
    ref = rtuning_rows(probe_rows, ProbeDataConfig(known_target="reference"))
    assert {r.id: r.completion[0]["content"] for r in ref.rows}["known"] == (
        "The question gives everything needed, so the answer is \\boxed{4}.")


def test_rft(probe_rows):
    built = rft_rows(probe_rows)
    assert [(r.id, r.target_kind, r.completion[0]["content"]) for r in built.rows] == [
        ("known", "sample", "It is \\boxed{4}"), ("unans", "refusal", DU)]
    assert [r.id for r in rft_rows(probe_rows, ProbeDataConfig(rft_refusals=False)).rows] == ["known"]


def test_dpo(probe_rows):
    built = dpo_rows(probe_rows)
    got = [(r.id, r.pair_kind, r.chosen[0]["content"], r.rejected[0]["content"]) for r in built.rows]
    assert got == [("known", "known", "It is \\boxed{4}", MU), ("ook", "ook", MU, "\\boxed{13}"),
                   ("unans", "ook", DU, "\\boxed{7}")]
    assert built.counts == {"known": 1, "ook": 2}
    two = dpo_rows(probe_rows, ProbeDataConfig(pairs_per_item=2))
    assert [r.rejected[0]["content"] for r in two.rows if r.id == "ook"] == ["\\boxed{13}", "no box at all"]
    assert built.rows[0].prompt[-1]["content"].endswith("Question: question known?")


def test_a_sample_recorded_correct_that_the_scorer_rejects_is_caught(probe_rows):
    probe_rows[0].samples[0] = _s(0, "\\boxed{5}", correct=True)  # a corrupted probe file
    with pytest.raises(ValueError, match="known: sample: correct: True intended, the scorer says False"):
        rtuning_rows(probe_rows)
    dropped = rtuning_rows(probe_rows, ProbeDataConfig(on_fail="drop"))
    assert "known" not in {r.id for r in dropped.rows}


def test_probe_data_cli(tmp_path, probe_rows):
    path = tmp_path / "probe.jsonl"
    write_jsonl(path, probe_rows)
    assert [r.id for r in read_probe(path)] == ["known", "ook", "unans", "undecided"]
    out = tmp_path / "dpo.jsonl"
    result = CliRunner().invoke(app, ["probe-data", "--probe", str(path), "--kind", "dpo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "3 rows from 4 probed items (1 known, 2 ook)" in " ".join(result.output.split())
    from abstain.schema import read_jsonl

    assert len(read_jsonl(out, DPORow)) == 3
    rt = tmp_path / "rt.jsonl"
    assert CliRunner().invoke(app, ["probe-data", "--probe", str(path), "--kind", "rtuning", "--out", str(rt)]).exit_code == 0
    assert [r.target_kind for r in read_jsonl(rt, SFTRow)] == ["sample", "idk", "idk"]


def test_probe_config_refuses_greedy_and_several_protocols():
    with pytest.raises(ValueError, match="temperature must be > 0"):
        ProbeConfig(model="bundled", protocol="idk", suite="quick", temperature=0)
    with pytest.raises(ValueError, match="one protocol"):
        ProbeConfig(model="bundled", protocol="idk,aca", suite="quick")


@pytest.mark.slow
def test_probe_with_the_bundled_model(tmp_path, bundled_backend):
    config = ProbeConfig(model="bundled", protocol="idk", suite="quick", limit=4, k=2, max_tokens=24, seed=3)
    result = run_probe(config, tmp_path / "probe", backend=bundled_backend)
    rows = read_probe(tmp_path / "probe")
    assert len(rows) == 4 and [r.id for r in rows] == [r.id for r in result.rows]
    for row in rows:
        assert row.k == 2 and len(row.samples) == 2 and [s.sample for s in row.samples] == [0, 1]
        assert row.n_correct == sum(s.correct is True for s in row.samples)
        assert row.ook == (row.n_correct == 0)
        assert row.p_hat == row.n_correct / 2
    assert rows[0].samples[0].response != rows[0].samples[1].response  # sampled, not greedy
    again = run_probe(config, tmp_path / "probe", backend=bundled_backend)  # resumes: nothing generated
    assert again.eval.generated == 0 and [r.model_dump() for r in again.rows] == [r.model_dump() for r in rows]
    # probing evaluation items is evaluation; their rows never become training data (abstain.data.guard) ...
    assert {(m.id, m.suite, m.near) for m in overlaps(rows)} == {(r.id, "quick", False) for r in rows}
    with pytest.raises(DataError, match=r"4 of 4 items are evaluation data.*in the quick.*--allow-eval-suite"):
        rtuning_rows(rows)
    # ... unless the run opts in to the suite by name: then only what another suite still reserves is refused
    allow = ProbeDataConfig(allow_eval_suites=("quick",))
    held = {m.id: (m.suite, m.near) for m in overlaps(rows, allow.allow_eval_suites)}
    assert held == {
        "gsm8k-500": ("mip-gsm8k-val", False),  # a validation item (MiP-GSM8K's answerable half)
        "selfaware-3346": ("transfer", False),  # a transfer-suite item
    }  # (treecut-v4d2c1-288 shares only TreeCut's template runs with transfer's items: not a near-duplicate)
    with pytest.raises(DataError, match="gsm8k-500"):
        rtuning_rows(rows, allow)
    rtuning = rtuning_rows([r for r in rows if r.id not in held], allow)
    assert [r.id for r in rtuning.rows] == ["math500-algebra/972", "treecut-v4d2c1-288"]  # the others get targets


def test_probe_passes_backend_options_to_the_backend(tmp_path):
    """``abstain probe --backend-option`` reaches the backend as in ``abstain eval`` (checked before any model loads)."""

    runner = CliRunner()
    bad = runner.invoke(app, ["probe", "--model", "bundled", "--suite", "quick", "--protocol", "idk", "--k", "2",
                              "--backend-option", "no_such_option=1", "--out", str(tmp_path / "p")])
    assert bad.exit_code != 0 and "no_such_option" in bad.output
    malformed = runner.invoke(app, ["probe", "--model", "bundled", "--suite", "quick", "--protocol", "idk",
                                    "--backend-option", "eager", "--out", str(tmp_path / "q")])
    assert malformed.exit_code != 0 and "expected key=value" in malformed.output
