"""Attribution targets from the policy's own boundary (abstain.train.data.attribution_data), on real UMWP pairs and a
hand-written probe: solved -> its correct sample, never solved -> MODEL_UNCERTAIN, unanswerable -> DATA_UNCERTAIN
naming the UMWP category's flaw; every target confirmed by abstain's scorer; the idk variant; the CLI."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.data.real_text import umwp_pairs
from abstain.records.probes import ProbeRow, ProbeSample
from abstain.schema import DataError, read_jsonl, write_jsonl
from abstain.scoring import score_completions
from abstain.train.data.attribution_data import CHECK, AttributionConfig, attribution_rows
from abstain.train.data.sft_data import SFTRow


@pytest.fixture(scope="module")
def pairs():
    items, _ = umwp_pairs(3, seed=2)
    return items  # original, twin, original, twin, ...


def _probe(pairs, solved: int):
    """The first ``solved`` answerable items solved once in 2 samples (their reference boxed), the rest never."""
    rows = []
    for n, item in enumerate(i for i in pairs if i.label == "answerable"):
        right = n < solved
        samples = [ProbeSample(sample=0, response=f"So \\boxed{{{item.answers[0]}}}" if right else "\\boxed{123456}",
                               pred="ANSWER", correct=right, format_ok=True),
                   ProbeSample(sample=1, response="\\boxed{123456}", pred="ANSWER", correct=False, format_ok=True)]
        rows.append(ProbeRow(**item.model_dump(), model="bundled", protocol="answer_only", k=2, n_judged=2,
                             n_correct=int(right), p_hat=0.5 if right else 0.0, ook=not right, samples=samples))
    return rows


def test_targets_follow_the_probe_and_are_what_the_scorer_reads(pairs):
    build = attribution_rows(pairs, _probe(pairs, solved=1))
    assert build.counts == {"data_uncertain": 3, "model_uncertain": 2, "sample": 1} and not build.dropped
    by_id = {r.id: r for r in build.rows}
    texts = [by_id[i.id].completion[0]["content"] for i in pairs]
    scored = score_completions(pairs, texts, protocol="attribution")
    assert [s.pred.value for s in scored] == ["ANSWER", "DATA_UNCERTAIN", "MODEL_UNCERTAIN", "DATA_UNCERTAIN",
                                              "MODEL_UNCERTAIN", "DATA_UNCERTAIN"]
    assert scored[0].correct is True
    for item, text in zip(pairs, texts, strict=True):
        if item.label == "unanswerable":  # the check names what kind of fact is missing, then decides
            assert text.startswith(CHECK) and text.endswith("\\boxed{<DATA_UNCERTAIN>}")
    # each row carries the policy's p-hat (a twin: its original's), what rl_ua reads as "beyond me"
    assert [by_id[i.id].p_hat for i in pairs] == [0.5, 0.5, 0.0, 0.0, 0.0, 0.0]


def test_the_idk_variant_and_bad_input(pairs):
    build = attribution_rows(pairs, _probe(pairs, solved=0), AttributionConfig(protocol="idk"))
    assert all(r.completion[0]["content"].endswith("\\boxed{I don't know.}") for r in build.rows)
    assert {r.protocol for r in build.rows} == {"idk"}
    with pytest.raises(ValueError, match="not in the probe"):
        attribution_rows(pairs, _probe(pairs, solved=0)[:1])
    from abstain.data.suites import load_suite

    held = load_suite("mip-gsm8k-val").items[:2]
    with pytest.raises(DataError, match="evaluation data.*mip-gsm8k-val"):
        attribution_rows(held, [])


def test_probe_data_cli_builds_them(pairs, tmp_path):
    items, probe = tmp_path / "items.jsonl", tmp_path / "probe.jsonl"
    write_jsonl(items, pairs)
    write_jsonl(probe, _probe(pairs, solved=1))
    out = tmp_path / "rows.jsonl"
    r = CliRunner().invoke(app, ["probe-data", "--kind", "attribution", "--probe", str(probe), "--data", str(items),
                                 "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "6 rows" in r.output and len(read_jsonl(out, SFTRow)) == 6


def test_synthetic_gaps_read_as_one_sentence():
    """Every gap synthesis writes (a sentence: "The problem never states ...", "... is missing") becomes the
    check's words as it is, never wrapped in "the question does not give"; a noun-phrase gap (TreeCut's) is."""
    from abstain.data.suites import load_suite
    from abstain.train.data.attribution_data import missing_fact

    items = [i for i in load_suite("heldout").items if i.label == "unanswerable" and i.gap]
    assert len(items) > 100
    for item in items:
        words = missing_fact(item)
        assert "does not give the problem" not in words and "does not give the exact" not in words, words
        gap = " ".join(item.gap.split()).rstrip(".")
        assert words == gap[0].lower() + gap[1:]
    treecut = items[0].model_copy(update={"gap": "one more equation to pin down the price of pie at Taste Good"})
    assert missing_fact(treecut) == f"the question does not give {treecut.gap}"
