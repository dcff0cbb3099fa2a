"""No question of an evaluation suite reaches training, `abstain export verl` or probe data, whatever its id, unless a
run opts in by name (abstain.data.guard). Every suite of the registry is covered, real and synthetic, exact and
near-duplicate (a shared 8-word run). Real shipped data throughout.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from abstain.cli import app
from abstain.data.guard import COMMON_RUN, check_training, normalize_question, overlaps, split_training
from abstain.data.near_duplicates import SHINGLE_WORDS
from abstain.data.suites import REGISTRY, load_suite
from abstain.protocols import PROTOCOLS, get_protocol
from abstain.schema import DataError, Item, write_jsonl
from abstain.train.data.build import load_items
from abstain.train.data.mix import MixConfig, training_items
from abstain.train.recipe import load_recipe, shipped_recipes
from abstain.train.data.sft_data import sft_row

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
def abstain_test() -> list[Item]:
    """Six Abstain-Test (Abstain-R1's headline benchmark) math questions: three verbatim, three with words around."""
    items = [i for i in load_suite("abstain-test").items if i.meta.get("dataset") == "abstain_test/umwp"]
    items = [i for i in items if not overlaps([i], allow=("abstain-test",))][:6]  # held by abstain-test alone
    out = [i.model_copy(update={"id": f"mine-{n}"}) for n, i in enumerate(items[:3])]
    out += [i.model_copy(update={"id": f"mine-{n + 3}", "question": f"Please solve this. {i.question} Show your work."})
            for n, i in enumerate(items[3:])]
    return out


def _sft_recipe(tmp_path: Path, **fields) -> Path:
    """A copy of the shipped tiny-sft recipe with other data fields."""
    data = yaml.safe_load(shipped_recipes()["tiny-sft"].read_text())
    data.pop("data")
    data.update(fields)
    path = tmp_path / "sft.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_every_suite_of_the_registry_is_guarded():
    from abstain.data.guard import _index

    texts = {s: {normalize_question(i.question) for i in load_suite(s).items} for s in REGISTRY}
    assert all(REGISTRY[s].reserved for s in REGISTRY)
    assert set(_index().texts) == set().union(*texts.values())
    for name in REGISTRY:  # one question of each suite, renamed, is caught and named
        item = load_suite(name).items[-1].model_copy(update={"id": "renamed"})
        (found,) = overlaps([item])
        assert not found.near and name in {p[0] for p in _index().texts[normalize_question(item.question)]}
    assert normalize_question("  Ｗhat  is\n２ + ３ ?!") == "what is 2 + 3"


def test_a_renamed_evaluation_item_in_a_data_file_is_refused_unless_allowed(tmp_path, held, held_transfer,
                                                                            abstain_test):
    clean = training_items(MixConfig(n=6, seed=11))
    for leak, suite in ((held, "heldout"), (held_transfer, "transfer"), (abstain_test[0], "abstain-test")):
        path = tmp_path / f"{leak.id}.jsonl"
        write_jsonl(path, [*clean, leak])
        recipe = load_recipe("tiny-sft", ["data.synth=", f"data.file={path}"])
        with pytest.raises(DataError) as err:
            load_items(recipe.data, recipe.allow_eval_suites)
        message = str(err.value)
        assert "evaluation data" in message and repr(leak.id) in message and str(path) in message
        assert "1 of 7 items" in message and _flat(leak.question)[:40] in message and f"the {suite} suite" in message
        assert "allow_eval_suites" in message and "--allow-eval-suite" in message
        opted = load_recipe("tiny-sft", ["data.synth=", f"data.file={path}", "allow_eval_suites=[all]"])
        assert len(load_items(opted.data, opted.allow_eval_suites)) == 7  # opted in: trained as asked
    ok = tmp_path / "clean.jsonl"
    write_jsonl(ok, clean)
    assert load_items(load_recipe("tiny-sft", ["data.synth=", f"data.file={ok}"]).data) == clean


def test_a_suite_is_refused_by_name_unless_the_recipe_opts_in_and_that_is_recorded(tmp_path):
    from abstain.train.trainers.runner import TrainRun

    for name in REGISTRY:  # every suite, before anything loads
        with pytest.raises(DataError, match=f"data.suite '{name}' is an evaluation suite.*allow_eval_suites"):
            load_recipe("tiny-grpo", ["data.synth=", f"data.suite={name}"])
    # validation is not training: it may name a suite (the best checkpoint it picks is disclosed in validation.json)
    assert load_recipe("cpu-demo-sft", ["validation.synth=", "validation.suite=quick"]).validation.suite == "quick"
    with pytest.raises(DataError, match="unknown suite 'quik'"):
        load_recipe("tiny-sft", ["allow_eval_suites=[quik]"])
    half = load_recipe("tiny-sft", ["data.synth=", "data.suite=quick", "data.limit=4", "allow_eval_suites=[quick]"])
    with pytest.raises(DataError, match=r"in the heldout, transfer.*suites.*allow_eval_suites: \[heldout, transfer"):
        load_items(half.data, half.allow_eval_suites)  # quick's items that heldout and transfer draw too stay refused
    recipe = load_recipe("tiny-sft", ["data.synth=", "data.suite=quick", "data.limit=4", "allow_eval_suites=[all]"])
    assert len(load_items(recipe.data, recipe.allow_eval_suites)) == 4
    assert TrainRun(tmp_path).record(recipe)["recipe"]["allow_eval_suites"] == ["all"]  # config.json says so


def test_clean_sources_still_load():
    assert len(load_items(load_recipe("tiny-sft").data)) == 8  # synthesis, seed 5
    assert len(load_items(load_recipe("tiny-sft", ["data.synth=", "data.umwp={n: 4}"]).data)) == 8  # real-text pairs
    for name in shipped_recipes():  # no shipped recipe trains or validates on evaluation data
        recipe = load_recipe(name)
        for spec in (getattr(recipe, "data", None), getattr(recipe, "validation", None)):
            if spec is not None:
                assert load_items(spec), name
        assert getattr(recipe, "allow_eval_suites", []) == [], name


def test_whitespace_case_and_unicode_variants_are_caught(held):
    digits = {ord(c): ord(c) + 0xFEE0 for c in "0123456789"}  # fullwidth digits: NFKC folds them back
    variants = [held.question.upper(), "  " + held.question.replace(" ", " \n\t ") + "  ",
                held.question.rstrip(".?") + " ?!", held.question.translate(digits),
                "\u00ab" + held.question.lower() + "\u00bb"]
    for text in variants:
        with pytest.raises(DataError, match="heldout suite"):
            check_training([text], "notes")
        with pytest.raises(DataError, match="my-item-1"):
            check_training([held.model_copy(update={"question": text})], "items")


def test_eight_shared_words_are_a_near_duplicate_and_seven_are_not(held_transfer):
    words = held_transfer.question.split()
    assert len(words) > 12 and SHINGLE_WORDS == 8
    for shared, caught in ((8, True), (7, False)):
        run = " ".join(words[2:2 + shared])
        text = f"Zebras in orbit quarrel. {run} Glaciers hum tonight."
        found = overlaps([text])
        assert bool(found) is caught, (shared, text)
        if caught:
            assert found[0].near and found[0].suite == "transfer"


def test_paraphrases_of_real_and_synthetic_questions_are_near_duplicates(held_transfer, held):
    validation = next(i for i in load_suite("mip-gsm8k-val").items if i.label == "unanswerable")
    sum_test = load_suite("abstain-test-sum").items[3]
    for item in (held_transfer, validation, sum_test, held):
        words = item.question.split()
        number = next((w for w in words if any(c.isdigit() for c in w)), None)
        paraphrases = [item.question.replace(number, "17", 1) if number else item.question + " Explain.",
                       "Suppose that " + item.question[0].lower() + item.question[1:],
                       " ".join(words[: max(9, len(words) - 6)])]
        for text in paraphrases:
            assert normalize_question(text) != normalize_question(item.question)
            (match,) = overlaps([text])  # a user's text: near-duplicates of the synthetic held-out set count too
            assert match.near, text
            with pytest.raises(DataError, match="near-duplicate"):
                check_training([Item(id="p", question=text, answers=["1"], label="answerable")], "paraphrases")
    # an ordinary problem shares no 8-word run with them; abstain's own synthesis is compared by exact text only
    assert overlaps(["Tom has 3 apples and buys 2 more. How many apples does he have now?"]) == []
    assert overlaps(training_items(MixConfig(n=200, seed=17))) == []
    assert COMMON_RUN == 8


def test_sft_rows_with_a_question_column_or_only_a_prompt(tmp_path, held, held_transfer):
    pytest.importorskip("trl")
    from abstain.train.trainers.sft import sft_rows

    clean = [sft_row(i, "idk", "\\boxed{3}", "answer") for i in training_items(MixConfig(n=3, seed=12))]
    path = tmp_path / "sft.jsonl"
    write_jsonl(path, [*clean, sft_row(held, "idk", IDK, "idk")])
    with pytest.raises(DataError) as err:
        sft_rows(load_recipe(_sft_recipe(tmp_path, sft_file=str(path))))
    assert "'my-item-1'" in str(err.value) and "1 of 4 items" in str(err.value)
    # no question column: the question is found inside the protocol's prompt, under every protocol
    for protocol in sorted(PROTOCOLS):
        rows = [{"prompt": r.prompt, "completion": r.completion} for r in clean]
        rows.append({"id": "row-7", "prompt": get_protocol(protocol).messages(held_transfer),
                     "completion": [{"role": "assistant", "content": IDK}]})
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        with pytest.raises(DataError, match="'row-7'.*transfer"):
            sft_rows(load_recipe(_sft_recipe(tmp_path, sft_file=str(path))))
    rows[-1].pop("id")  # without an id the row is named by its position
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match=r"first: '#4'"):
        sft_rows(load_recipe(_sft_recipe(tmp_path, sft_file=str(path))))
    assert len(sft_rows(load_recipe(_sft_recipe(tmp_path, sft_file=str(path), allow_eval_suites=["all"])))) == 4


def test_dpo_pairs_with_an_evaluation_question_are_refused(tmp_path, held_transfer):
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
    assert r.exit_code == 2 and "evaluation data" in r.output and "my-gsm8k-copy" in _flat(r.output), r.output


def test_export_verl_refuses_abstain_test_questions_verbatim_or_wrapped_unless_opted_in(tmp_path, abstain_test):
    out = tmp_path / "train.jsonl"
    data = tmp_path / "items.jsonl"
    clean = training_items(MixConfig(n=4, seed=13))
    write_jsonl(data, [*clean, *abstain_test])
    r = CliRunner().invoke(app, ["export", "verl", "--data", str(data), "--protocol", "idk", "--out", str(out)])
    text = _flat(r.output)
    assert r.exit_code == 2 and "6 of 10 items" in text and "abstain-test suite" in text and not out.exists(), text
    assert "(3 near)" in text and "--allow-eval-suite" in text  # the three with words around: near-duplicates
    r = CliRunner().invoke(app, ["export", "verl", "--data", str(data), "--protocol", "idk", "--out", str(out),
                                 "--allow-eval-suite", "abstain-test"])
    assert r.exit_code == 0 and len(out.read_text().splitlines()) == 10, r.output
    assert "opted in" in _flat(r.output) and "abstain-test" in _flat(r.output)
    for suite in ("quick", "abstain-test-sum"):  # a suite by name
        r = CliRunner().invoke(app, ["export", "verl", "--suite", suite, "--protocol", "idk", "--out", str(out)])
        assert r.exit_code == 2 and "evaluation data" in r.output, suite
    write_jsonl(data, clean)
    r = CliRunner().invoke(app, ["export", "verl", "--data", str(data), "--protocol", "idk", "--out", str(out)])
    assert r.exit_code == 0 and len(out.read_text().splitlines()) == 4, r.output


def test_sft_data_and_probe_data_refuse_evaluation_inputs(tmp_path, held):
    from abstain.records.probes import ProbeRow, ProbeSample
    from abstain.train.data.probe_data import ProbeDataConfig, dpo_rows, rft_rows, rtuning_rows

    items = tmp_path / "items.jsonl"
    write_jsonl(items, [held])
    r = CliRunner().invoke(app, ["sft-data", "--data", str(items), "--protocol", "idk", "--out",
                                 str(tmp_path / "sft.jsonl"), "--no-tokens"])
    assert r.exit_code == 2 and "evaluation data" in r.output and "my-item-1" in _flat(r.output)
    sample = ProbeSample(sample=0, response="\\boxed{5}", pred="ANSWER", correct=False, format_ok=True)
    row = ProbeRow(**held.model_dump(), model="m", protocol="idk", k=1, n_judged=1, n_correct=0, p_hat=0.0,
                   ook=True, samples=[sample])
    for build in (rtuning_rows, rft_rows, dpo_rows):
        with pytest.raises(DataError, match="evaluation data.*my-item-1"):
            build([row])
    assert rtuning_rows([row], ProbeDataConfig(allow_eval_suites=("heldout", "transfer"))).rows  # opted in
    probe = tmp_path / "probe.jsonl"
    write_jsonl(probe, [row])
    r = CliRunner().invoke(app, ["probe-data", "--probe", str(probe), "--kind", "rtuning", "--out",
                                 str(tmp_path / "rt.jsonl")])
    assert r.exit_code == 2 and "evaluation data" in r.output and "my-item-1" in _flat(r.output)


def test_abstain_cot_leaves_out_its_evaluation_questions_and_says_which(tmp_path):
    from abstain.train.data.abstain_cot import load_abstain_cot

    everything = load_abstain_cot(allow=("all",))  # opted in to every suite: the whole set
    cot = load_abstain_cot()
    assert cot.guard.rows == len(everything.rows) + everything.dropped == 3486
    assert cot.guard.removed > 1000 and len(cot.rows) + cot.dropped == cot.guard.kept
    assert overlaps(cot.rows) == []
    assert any("abstain-test" in reason for reason in cot.guard.reasons)  # Abstain-R1's own benchmark shares them
    assert load_abstain_cot(("falseqa",)).guard.removed == 0
    r = CliRunner().invoke(app, ["sft-data", "--abstain-cot", "--cot-subsets", "falseqa,umwp", "--protocol", "clarify",
                                 "--out", str(tmp_path / "cot.jsonl"), "--no-tokens"])
    assert r.exit_code == 0 and "left out Abstain-CoT:" in _flat(r.output) and "in suite" in _flat(r.output), r.output


def test_the_umwp_source_drops_evaluation_items_and_paraphrases_and_says_so():
    from abstain.data.real_text import umwp_pairs

    items, report = umwp_pairs(None, seed=0)
    assert report.rows == 5200 and report.kept == len(items) and report.removed == report.rows - report.kept
    for suite in ("abstain-test", "transfer", "quick", "abstentionbench-lite"):  # fixed draws that hold UMWP rows
        assert report.reasons[f"in suite {suite}"] > 0, suite
    assert report.reasons["near-duplicate in suite math"] > 400  # MiP-SVAMP rewrote the same SVAMP problems
    assert not any(r.endswith("suite math") and not r.startswith("near") for r in report.reasons)  # UMWP's own rows
    assert overlaps(items) == []
    pairs: dict[str, list[str]] = {}
    for item in items:
        pairs.setdefault(item.meta["pair_id"], []).append(item.label)
    assert all(sorted(labels) == ["answerable", "unanswerable"] for labels in pairs.values())  # twins together
    drawn, _ = umwp_pairs(5, seed=3)
    assert len(drawn) == 10 and drawn == umwp_pairs(5, seed=3)[0] and drawn != umwp_pairs(5, seed=4)[0]
    with pytest.raises(DataError, match=f"data.umwp.n: 5000 pairs asked, {len(items) // 2} left"):
        umwp_pairs(5000, seed=0)
    with pytest.raises(DataError, match="unknown.*'missing_key'"):
        umwp_pairs(4, seed=0, perturbations=["missing_key"])


def test_split_training_reports_by_suite(abstain_test):
    kept, removed, report = split_training([*abstain_test, "Tom has 3 apples. How many?"], "mine")
    assert kept == ["Tom has 3 apples. How many?"] and len(removed) == 6
    assert sum(n for reason, n in report.reasons.items() if reason.startswith("in suite")) == 3  # the verbatim ones
    assert sum(report.reasons.values()) == 6 and {m.suite for m in removed} == {"abstain-test"}
    assert report.summary().startswith("mine: 7 rows, 6 removed (")


def test_recipe_data_mixes_synthesis_and_real_text():
    recipe = load_recipe("tiny-sft", ["data.umwp={n: 3, seed: 1}"])  # tiny-sft's synth (8) plus 3 UMWP pairs
    items = load_items(recipe.data)
    assert len(items) == 14 and sum(i.id.startswith("umwp-") for i in items) == 6
    for bad in (["data.suite=quick", "data.umwp={n: 3}", "data.synth="], ["data.file=x.jsonl", "data.umwp={n: 2}"]):
        with pytest.raises(DataError, match="synth and umwp together"):
            load_recipe("tiny-sft", bad)


@pytest.mark.slow
def test_eval_on_the_heldout_suite_still_runs(tmp_path):
    r = CliRunner().invoke(app, ["eval", "--model", "bundled", "--suite", "heldout", "--limit", "2", "--protocol",
                                 "idk", "--max-tokens", "4", "--resamples", "0", "--out", str(tmp_path / "ev")])
    assert r.exit_code == 0, r.output
    assert len((tmp_path / "ev" / "scored.jsonl").read_text().splitlines()) == 2
