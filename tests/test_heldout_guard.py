"""No held-out question reaches training or `abstain export verl`, whatever its id (abstain.data.heldout_guard).

Held out: the held-out synthetic benchmark (the ``heldout`` suite), the ``transfer`` suite (docs/suites.md's
out-of-distribution comparison, "never used for training or tuning"), the ``mip-gsm8k-val`` validation split and
Abstain-R1's SUM test — their real-text questions together with their near-duplicates (a shared 8-word run).
Real shipped data throughout.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from abstain.cli import app
from abstain.data.heldout_guard import (EVAL_ONLY_SUITES, check_not_heldout, heldout_matches, heldout_texts,
                                        normalize_question)
from abstain.data.suites import load_suite
from abstain.protocols import PROTOCOLS, get_protocol
from abstain.schema import DataError, Item, write_jsonl
from abstain.train.mix import MixConfig, training_items
from abstain.train.recipe import load_recipe, shipped_recipes
from abstain.train.sft_data import sft_row

IDK = "\\boxed{I don't know.}"


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def held() -> Item:
    """A held-out twin of the synthetic benchmark under another id."""
    item = load_suite("heldout").items[5]
    return item.model_copy(update={"id": "my-item-1", "meta": {}})


@pytest.fixture(scope="module")
def held_transfer() -> Item:
    """A GSM8K question of the transfer suite (public benchmark, held out as out-of-distribution data)."""
    item = next(i for i in load_suite("transfer").items if i.id.startswith("gsm8k-"))
    return item.model_copy(update={"id": "my-gsm8k-copy"})


@pytest.fixture(scope="module")
def quick_held() -> list[str]:
    """Ids of the quick suite's held-out items, found by text without the guard."""
    texts = {normalize_question(i.question) for s in EVAL_ONLY_SUITES for i in load_suite(s).items}
    return [i.id for i in load_suite("quick").items if normalize_question(i.question) in texts]


def _sft_recipe(tmp_path: Path, **fields) -> Path:
    """A copy of the shipped tiny-sft recipe with other data fields."""
    data = yaml.safe_load(shipped_recipes()["tiny-sft"].read_text())
    data.pop("data")
    data.update(fields)
    path = tmp_path / "sft.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_what_is_held_out():
    assert EVAL_ONLY_SUITES == ("heldout", "transfer", "mip-gsm8k-val", "abstain-test-sum")
    texts = {s: {normalize_question(i.question) for i in load_suite(s).items} for s in EVAL_ONLY_SUITES}
    assert heldout_texts() == set().union(*texts.values())
    assert len(texts["heldout"]) == 720 and len(texts["transfer"] - texts["heldout"]) == 319  # 60 are held-out twins
    assert len(texts["mip-gsm8k-val"]) == 1056 and not texts["mip-gsm8k-val"] & texts["transfer"]  # 8 repeated texts
    assert len(texts["abstain-test-sum"]) == 567
    assert normalize_question("  Ｗhat  is\n２ + ３ ?!") == "what is 2 + 3"


def test_a_renamed_heldout_item_in_a_data_file_is_refused(tmp_path, held, held_transfer):
    clean = training_items(MixConfig(n=6, seed=11))
    for leak in (held, held_transfer):
        path = tmp_path / f"{leak.id}.jsonl"
        write_jsonl(path, [*clean, leak])
        recipe = load_recipe("tiny-sft", ["data.synth=", f"data.file={path}"])
        with pytest.raises(DataError) as err:
            recipe.data.load()
        message = str(err.value)
        assert "held-out" in message and repr(leak.id) in message and str(path) in message
        assert "1 of 7 items" in message and _flat(leak.question)[:40] in message
    ok = tmp_path / "clean.jsonl"
    write_jsonl(ok, clean)
    assert load_recipe("tiny-sft", ["data.synth=", f"data.file={ok}"]).data.load() == clean


def test_suites_with_heldout_items_are_refused(quick_held):
    with pytest.raises(DataError) as err:
        load_recipe("tiny-sft", ["data.synth=", "data.suite=quick"]).data.load()
    message = str(err.value)
    assert "suite 'quick'" in message and "held-out" in message and repr(quick_held[0]) in message
    assert "60 of 120 items" in message and "(17 near)" in message and len(quick_held) == 43  # 17 near-duplicates
    for name in EVAL_ONLY_SUITES:  # refused by name, before anything loads
        with pytest.raises(DataError, match="held-out"):
            load_recipe("tiny-grpo", ["data.synth=", f"data.suite={name}"])
    with pytest.raises(DataError, match="held-out"):  # a validation split is tuning: the same rule
        load_recipe("cpu-demo-sft", ["validation.synth=", "validation.suite=quick"]).validation.load()


def test_clean_sources_still_load():
    assert len(load_recipe("tiny-sft").data.load()) == 8  # synthesis, seed 5
    assert len(load_recipe("tiny-sft", ["data.synth=", "data.umwp={n: 4}"]).data.load()) == 8  # real-text pairs
    quick = load_recipe("tiny-sft", ["data.synth=", "data.suite=quick", "data.limit=4", "data.seed=3"])
    with pytest.raises(DataError, match="3 of 4 items.*gsm8k-500"):  # only what is trained is checked: this subset
        quick.data.load()
    for name, path in shipped_recipes().items():  # no shipped recipe trains or validates on held-out data
        recipe = load_recipe(name)
        for spec in (getattr(recipe, "data", None), getattr(recipe, "validation", None)):
            if spec is not None:
                assert spec.load(), name


def test_whitespace_case_and_unicode_variants_are_caught(held):
    digits = {ord(c): ord(c) + 0xFEE0 for c in "0123456789"}  # fullwidth digits: NFKC folds them back
    variants = [
        held.question.upper(),
        "  " + held.question.replace(" ", " \n\t ") + "  ",
        held.question.rstrip(".?") + " ?!",
        held.question.translate(digits),
        "\u00ab" + held.question.lower() + "\u00bb",
    ]
    for text in variants:
        with pytest.raises(DataError, match="held-out"):
            check_not_heldout([text], "notes")
        with pytest.raises(DataError, match="my-item-1"):
            check_not_heldout([held.model_copy(update={"question": text})], "items")
    changed = held.question.replace("costs", "cost", 1)
    assert changed != held.question and heldout_matches([changed]) == []


def test_sft_rows_with_a_question_column_or_only_a_prompt(tmp_path, held, held_transfer):
    pytest.importorskip("trl")
    from abstain.train.sft import sft_rows

    clean = [sft_row(i, "idk", "\\boxed{3}", "answer") for i in training_items(MixConfig(n=3, seed=12))]
    leak = sft_row(held, "idk", IDK, "idk")
    path = tmp_path / "sft.jsonl"
    write_jsonl(path, [*clean, leak])
    with pytest.raises(DataError) as err:
        sft_rows(load_recipe(_sft_recipe(tmp_path, sft_file=str(path))))
    assert "held-out" in str(err.value) and "'my-item-1'" in str(err.value) and "1 of 4 items" in str(err.value)

    # no question column: the held-out question is found inside the protocol's prompt, under every protocol
    for protocol in sorted(PROTOCOLS):
        rows = [{"prompt": r.prompt, "completion": r.completion} for r in clean]
        rows.append({"id": "row-7", "prompt": get_protocol(protocol).messages(held_transfer),
                     "completion": [{"role": "assistant", "content": IDK}]})
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        with pytest.raises(DataError) as err:
            sft_rows(load_recipe(_sft_recipe(tmp_path, sft_file=str(path))))
        assert "held-out" in str(err.value) and "'row-7'" in str(err.value), protocol
    rows[-1].pop("id")  # without an id the row is named by its position
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match=r"held-out.*first: '#4'"):
        sft_rows(load_recipe(_sft_recipe(tmp_path, sft_file=str(path))))
    path.write_text("".join(json.dumps(r) + "\n" for r in rows[:-1]))
    assert len(sft_rows(load_recipe(_sft_recipe(tmp_path, sft_file=str(path))))) == 3


def test_dpo_pairs_with_a_heldout_question_are_refused(tmp_path, held_transfer):
    pytest.importorskip("trl")
    idk, wrong = [{"role": "assistant", "content": IDK}], [{"role": "assistant", "content": "\\boxed{5}"}]
    row = {"prompt": get_protocol("idk").messages(held_transfer), "chosen": idk, "rejected": wrong,
           "id": held_transfer.id, "question": held_transfer.question}
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps(row) + "\n")
    recipe = tmp_path / "dpo.yaml"
    recipe.write_text(f"kind: dpo\nmodel: bundled\npairs_file: {pairs}\nsteps: 1\nbatch_size: 2\n"
                      "learning_rate: 1.0e-5\nlora: {r: 4, alpha: 8}\nmax_length: 256\n")
    r = CliRunner().invoke(app, ["train", "dpo", "--recipe", str(recipe), "--out", str(tmp_path / "dpo")])
    assert r.exit_code == 2 and "held-out" in r.output and "my-gsm8k-copy" in _flat(r.output), r.output


def test_export_verl_refuses_heldout_items(tmp_path, held, quick_held):
    out = tmp_path / "train.jsonl"
    r = CliRunner().invoke(app, ["export", "verl", "--suite", "quick", "--protocol", "idk", "--out", str(out)])
    text = _flat(r.output)
    assert r.exit_code == 2 and "held-out" in text and quick_held[0] in text and not out.exists()
    data = tmp_path / "items.jsonl"
    write_jsonl(data, [*training_items(MixConfig(n=4, seed=13)), held])
    r = CliRunner().invoke(app, ["export", "verl", "--data", str(data), "--protocol", "idk", "--out", str(out)])
    assert r.exit_code == 2 and "held-out" in r.output and "my-item-1" in _flat(r.output)
    r = CliRunner().invoke(app, ["export", "verl", "--suite", "abstain-test-sum", "--protocol", "idk", "--out", str(out)])
    assert r.exit_code == 2 and "held-out" in r.output  # a final-table benchmark now
    write_jsonl(data, training_items(MixConfig(n=4, seed=13)))
    r = CliRunner().invoke(app, ["export", "verl", "--data", str(data), "--protocol", "idk", "--out", str(out)])
    assert r.exit_code == 0 and len(out.read_text().splitlines()) == 4, r.output


def test_sft_data_and_probe_data_refuse_heldout_inputs(tmp_path, held):
    from abstain.probe import ProbeRow, ProbeSample
    from abstain.train.probe_data import dpo_rows, rft_rows, rtuning_rows

    items = tmp_path / "items.jsonl"
    write_jsonl(items, [held])
    r = CliRunner().invoke(app, ["sft-data", "--data", str(items), "--protocol", "idk", "--out",
                                 str(tmp_path / "sft.jsonl"), "--no-tokens"])
    assert r.exit_code == 2 and "held-out" in r.output and "my-item-1" in _flat(r.output)

    sample = ProbeSample(sample=0, response="\\boxed{5}", pred="ANSWER", correct=False, format_ok=True)
    row = ProbeRow(**held.model_dump(), model="m", protocol="idk", k=1, n_judged=1, n_correct=0, p_hat=0.0,
                   ook=True, samples=[sample])
    for build in (rtuning_rows, rft_rows, dpo_rows):
        with pytest.raises(DataError, match="held-out.*my-item-1"):
            build([row])
    probe = tmp_path / "probe.jsonl"
    write_jsonl(probe, [row])
    r = CliRunner().invoke(app, ["probe-data", "--probe", str(probe), "--kind", "rtuning", "--out",
                                 str(tmp_path / "rt.jsonl")])
    assert r.exit_code == 2 and "held-out" in r.output and "my-item-1" in _flat(r.output)


def test_abstain_cot_subsets_with_heldout_questions_are_refused(tmp_path):
    from abstain.train.abstain_cot import ABSTAIN_COT_HELDOUT_SUBSETS, ABSTAIN_COT_SUBSETS, load_abstain_cot

    with pytest.raises(DataError) as err:
        load_abstain_cot()
    message = str(err.value)
    assert "held-out" in message and "185 of 3486 items" in message and "gsm8k_abstain, umwp" in message
    assert "'abstain_cot-gsm8k_abstain-" in message
    everything = load_abstain_cot(allow_heldout=True)  # to inspect the set only
    found = heldout_matches(everything.rows)
    assert tuple(sorted({m.id.split("-")[1] for m in found})) == ABSTAIN_COT_HELDOUT_SUBSETS
    assert {m.suite for m in found} == {"transfer", "mip-gsm8k-val"} and sum(m.near for m in found) == 108
    clean = tuple(s for s in ABSTAIN_COT_SUBSETS if s not in ABSTAIN_COT_HELDOUT_SUBSETS)
    assert heldout_matches(load_abstain_cot(clean[:2]).rows) == []
    r = CliRunner().invoke(app, ["sft-data", "--abstain-cot", "--cot-subsets", "bbq,umwp", "--protocol", "clarify",
                                 "--out", str(tmp_path / "cot.jsonl"), "--no-tokens"])
    assert r.exit_code == 2 and "held-out" in r.output and "abstain_cot-umwp-" in _flat(r.output)


def test_evaluation_reads_heldout_items_as_before():
    assert len(load_suite("heldout").items) == 720 and len(load_suite("quick").items) == 120
    assert len(load_suite("transfer").items) == 380


@pytest.mark.slow
def test_eval_on_the_heldout_suite_still_runs(tmp_path):
    r = CliRunner().invoke(app, ["eval", "--model", "bundled", "--suite", "heldout", "--limit", "2", "--protocol",
                                 "idk", "--max-tokens", "4", "--resamples", "0", "--out", str(tmp_path / "ev")])
    assert r.exit_code == 0, r.output
    assert len((tmp_path / "ev" / "scored.jsonl").read_text().splitlines()) == 2


def test_paraphrased_heldout_questions_are_near_duplicates(held_transfer):
    from abstain.data.near_duplicates import shingles

    validation = next(i for i in load_suite("mip-gsm8k-val").items if i.label == "unanswerable")
    sum_test = load_suite("abstain-test-sum").items[3]
    for item in (held_transfer, validation, sum_test):
        words = item.question.split()
        # a number changed, a name swapped, a clause dropped: most 8-word runs survive
        paraphrases = [item.question.replace(next(w for w in words if any(c.isdigit() for c in w)), "17", 1)
                       if any(any(c.isdigit() for c in w) for w in words) else item.question + " Explain.",
                       "Suppose that " + item.question[0].lower() + item.question[1:],
                       " ".join(words[: max(9, len(words) - 6)])]
        for text in paraphrases:
            assert normalize_question(text) != normalize_question(item.question)
            (match,) = heldout_matches([text])
            assert match.near and match.suite in EVAL_ONLY_SUITES, text
            with pytest.raises(DataError, match="near-duplicates"):
                check_not_heldout([Item(id="p", question=text, answers=["1"], label="answerable")], "paraphrases")
    # an ordinary problem shares no 8-word run with them, and synthesis is compared by exact text only
    assert heldout_matches(["Tom has 3 apples and buys 2 more. How many apples does he have now?"]) == []
    assert heldout_matches(training_items(MixConfig(n=200, seed=17))) == []
    assert len(shingles("one two three four five six seven eight nine")) == 2


def test_the_umwp_source_drops_evaluation_items_and_paraphrases_and_says_so():
    from abstain.data.real_text import umwp_pairs

    items, report = umwp_pairs(None, seed=0)
    assert (report.rows, report.removed, report.kept) == (5200, 1258, 3942)
    assert report.reasons["near-duplicate of mip_svamp"] == 621  # of the 752 rows sharing a run with MiP-SVAMP
    assert report.reasons["in suite transfer"] == 99 and report.reasons["in suite quick"] == 20
    assert "1258 removed" in report.summary() and "3942 kept" in report.summary()
    assert heldout_matches(items) == []
    pairs = {}
    for item in items:
        pairs.setdefault(item.meta["pair_id"], []).append(item.label)
    assert all(sorted(labels) == ["answerable", "unanswerable"] for labels in pairs.values())  # twins together
    drawn, _ = umwp_pairs(5, seed=3)
    assert len(drawn) == 10 and drawn == umwp_pairs(5, seed=3)[0] and drawn != umwp_pairs(5, seed=4)[0]
    with pytest.raises(DataError, match="data.umwp.n: 5000 pairs asked, 1971 left"):
        umwp_pairs(5000, seed=0)
    with pytest.raises(DataError, match="unknown.*'missing_key'"):
        umwp_pairs(4, seed=0, perturbations=["missing_key"])


def test_recipe_data_mixes_synthesis_and_real_text():
    recipe = load_recipe("tiny-sft", ["data.umwp={n: 3, seed: 1}"])  # tiny-sft's synth (8) plus 3 UMWP pairs
    items = recipe.data.load()
    assert len(items) == 14 and sum(i.id.startswith("umwp-") for i in items) == 6
    for bad in (["data.suite=quick", "data.umwp={n: 3}", "data.synth="], ["data.file=x.jsonl", "data.umwp={n: 2}"]):
        with pytest.raises(DataError, match="synth and umwp together"):
            load_recipe("tiny-sft", bad)
    for name in ("mip-gsm8k-val", "abstain-test-sum"):
        with pytest.raises(DataError, match="held-out evaluation data"):
            load_recipe("tiny-sft", ["data.synth=", f"data.suite={name}"])
