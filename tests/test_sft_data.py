"""SFT targets from certified synthesis: every target is what abstain's scorer says it is, the arithmetic
is exact (re-checked with sympy, against the certifier's own witnesses for conditional answers), and an
answerable problem and its twin share their trace up to the missing premise."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
import sympy
from sympy.parsing.sympy_parser import (
    implicit_multiplication_application,
    parse_expr,
    rationalize,
    standard_transformations,
)
from typer.testing import CliRunner

from abstain.cli import app
from abstain.data.loaders import load_benchmark
from abstain.protocols import get_protocol
from abstain.schema import Item, read_jsonl
from abstain.synth import OPERATORS, HardConfig, SynthConfig, generate_hard, generate_missing_premise, make_pair
from abstain.train.data.check import score_targets
from abstain.train.data.sft_data import SFTConfig, SFTRow, assign_aca, build_sft, parse_aca_mix
from abstain.train.data.targets import TargetConfig, build_target

N_PAIRS = 1000
N_HARD = 1000


@pytest.fixture(scope="module")
def items() -> list[Item]:
    """1,000 certified pairs (all six perturbations, round robin) and 1,000 hard variants."""
    pairs = list(generate_missing_premise(SynthConfig(n=2 * N_PAIRS, seed=7)))
    return pairs + list(generate_hard(HardConfig(n=N_HARD, seed=7)))


# (protocol, aca mix, target config) -> the target kinds each must produce, >= 1,000 of each
BUILDS = [
    ("attribution", None, TargetConfig(), {"answer", "data_uncertain", "hard_abstain"}),
    ("attribution", None, TargetConfig(hard="solve", names="noun", verbosity="long"), {"answer", "data_uncertain",
                                                                                       "hard_answer"}),
    ("idk", None, TargetConfig(verbosity="short"), {"answer", "idk", "hard_abstain"}),
    ("clarify", None, TargetConfig(), {"answer", "clarify", "hard_answer"}),
    ("clarify", None, TargetConfig(quote=True, hard="abstain"), {"answer", "clarify", "hard_abstain"}),
    ("aca", "ELICIT=1", TargetConfig(), {"answer", "elicit", "hard_answer"}),
    ("aca", "COND=1", TargetConfig(quote=True), {"cond"}),
    ("aca", "ABS=1", TargetConfig(names="noun"), {"abs"}),
]


@pytest.mark.parametrize(("protocol", "mix", "targets", "kinds"), BUILDS)
def test_every_built_target_passes_the_scorer(items, protocol, mix, targets, kinds):
    config = SFTConfig(protocol=protocol, targets=targets, **({"aca_mix": parse_aca_mix(mix)} if mix else {}))
    built = build_sft(items, config)  # on_fail="error": a single failing target raises
    assert built.dropped == []
    assert len(built.rows) == len(items)
    for kind in kinds:
        assert built.counts[kind] >= 1000, built.counts
    # the scorer, called again from outside: 100% of the written completions are what they claim
    by_id = {i.id: i for i in items}
    scored = score_targets([by_id[r.id] for r in built.rows], [r.completion[0]["content"] for r in built.rows],
                           protocol)
    expected = {"answer": ("ANSWER", True), "hard_answer": ("ANSWER", True), "data_uncertain": ("DATA_UNCERTAIN", None),
                "idk": ("MODEL_UNCERTAIN", None), "abs": ("MODEL_UNCERTAIN", None), "clarify": ("MODEL_UNCERTAIN", None),
                "hard_abstain": ("MODEL_UNCERTAIN", None), "elicit": ("ANSWER", False), "cond": ("ANSWER", False)}
    behavior = {"elicit": "ELICIT", "clarify": "ELICIT", "cond": "COND", "abs": "ABS", "data_uncertain": "ABS",
                "idk": "ABS"}
    for row, s in zip(built.rows, scored, strict=True):
        pred, correct = expected[row.target_kind]
        assert s.format_ok and s.pred.value == pred and s.correct is correct, (row.id, row.completion)
        if row.target_kind in behavior:
            assert s.behavior.value == behavior[row.target_kind], (row.id, row.completion)
        if row.target_kind in ("clarify", "elicit"):
            assert s.clarification_correct is True, (row.id, row.completion)
    twins = [by_id[r.id] for r in built.rows if r.label == "unanswerable"]
    assert Counter(t.perturbation for t in twins) == {op: N_PAIRS // 6 + (i < N_PAIRS % 6) for i, op in
                                                     enumerate(OPERATORS)}


def test_prompt_is_the_protocol_prompt_and_columns_are_flat(items):
    built = build_sft(items[:40] + items[-5:], SFTConfig(protocol="clarify"))
    for row, item in zip(built.rows, items[:40] + items[-5:], strict=True):
        assert row.prompt == get_protocol("clarify").messages(item)
        assert row.completion[0]["role"] == "assistant" and len(row.completion) == 1
        dumped = json.loads(row.model_dump_json())
        for key, value in dumped.items():  # datasets/Arrow reads any file: no nested dicts but the messages
            assert key in ("prompt", "completion") or value is None or isinstance(value, (str, list)), key


_TRANSFORMS = (*standard_transformations, implicit_multiplication_application, rationalize)


def _sym(text: str) -> sympy.Expr:
    """An arithmetic expression of a target ("4 * 77", "(x - 46) + 47", "4x + 8"), exactly."""
    return parse_expr(text, transformations=_TRANSFORMS)


_STEP = re.compile(r"^(?P<lhs>[^=\n]+) = (?P<rest>[^\n]+)\.$")


def _chain(line: str) -> list[str]:
    m = _STEP.match(line)
    return [] if m is None else [p.strip() for p in m.group("rest").split(" = ")]


def test_arithmetic_is_exact_and_conditional_answers_match_the_certificates(items):
    """sympy re-checks every ``a = b = c`` line; COND answers agree with the certifier's two witnesses."""
    pairs = items[: 2 * 300]
    answer = build_sft(pairs + items[-200:], SFTConfig(protocol="attribution", targets=TargetConfig(hard="solve")))
    cond = build_sft(pairs, SFTConfig(protocol="aca", aca_mix=parse_aca_mix("COND=1")))
    checked = 0
    for row in answer.rows + cond.rows:
        for line in row.completion[0]["content"].splitlines():
            parts = [p for p in _chain(line) if p != "unknown"]
            if len(parts) >= 2 and not any(c.isalpha() and c != "x" for c in "".join(parts)):
                values = [_sym(p) for p in parts]
                assert all(sympy.simplify(v - values[0]) == 0 for v in values), line
                checked += 1
    assert checked > 1500
    by_id = {i.id: i for i in pairs}
    x = sympy.Symbol("x")
    for row in cond.rows:
        if row.target_kind != "cond":
            continue
        item = by_id[row.id]
        boxed = row.completion[0]["content"].rsplit("\\boxed{", 1)[1][:-1]
        expr = _sym(boxed)
        for witness in item.meta["witnesses"]:  # certified solutions of the twin: the answer must fit both
            value = expr.subs(x, witness[item.gap_variable])
            assert value == witness[item.graph["target"]], (row.id, boxed, witness)


def test_answerable_and_twin_share_their_check_up_to_the_missing_premise(items):
    diverge_first = 0
    for k in range(0, 600, 2):
        original, twin = items[k], items[k + 1]
        assert original.pair_id == twin.pair_id
        a = build_target(original, "idk").text.splitlines()
        u = build_target(twin, "idk").text.splitlines()
        gap_line = next(i for i, line in enumerate(u) if " = unknown." in line)
        assert a[:gap_line] == u[:gap_line], (a, u)  # identical until the check reaches the gap
        assert u[gap_line + 1].startswith("A needed fact is missing")
        assert a[gap_line].split(" = ")[0] == u[gap_line].split(" = ")[0]  # the same quantity, checked
        diverge_first += gap_line == 0
    # the decision is in the first line only when the target itself is the missing premise
    assert diverge_first < 300 * 0.5


def test_quoted_check_lines_quote_the_question(items):
    """With ``quote``, every check line first quotes the problem sentence it reads (or the perturbed one)."""
    quoted = 0
    for item in items[:400] + items[-100:]:
        lines = build_target(item, "attribution", TargetConfig(quote=True, hard="solve")).text.splitlines()
        check = lines[: next(i for i, ln in enumerate(lines) if ln.startswith(("All needed", "A needed")))]
        for line in check:
            m = re.match(r'"([^"]+)" ', line)
            if m is None:  # only the gap of an entity disruption: no sentence of the twin states it
                assert item.perturbation == "entity_disruption" and " = unknown." in line, line
                continue
            assert m.group(1) in item.question
            quoted += 1
    assert quoted > 1200
    twin = make_pair(seed=3, index=0, operator="numerical_value_removal").twin
    assert '"Lena also drove the leg to Blois." Blois = unknown.' in build_target(twin, "idk", TargetConfig(quote=True)).text


def test_hand_checked_targets():
    """The numbers checked by hand: 143 - 46 = 97, 97 + 47 = 144."""
    pair = make_pair(seed=3, index=0, operator="numerical_value_removal")
    assert "Lena drove 143 km to reach Blois." in pair.original.question
    assert build_target(pair.original, "attribution").text == (
        "Arles = Nantes + 47.\nNantes = Blois - 46.\nBlois = 143.\nAll needed facts are given.\n"
        "Nantes = 143 - 46 = 97.\nArles = 97 + 47 = 144.\n\\boxed{144}"
    )
    assert build_target(pair.twin, "clarify").text == (
        "<thinking>Arles = Nantes + 47.\nNantes = Blois - 46.\n"
        "Blois = unknown. The problem never states how far Lena drove on the leg to Blois.\n"
        "A needed fact is missing, so I ask for it.</thinking>"
        "<answer>\\boxed{I don't know.} Could you tell me how far Lena drove on the leg to Blois?</answer>"
    )
    assert build_target(pair.twin, "aca", aca_choice="COND").text.endswith(
        "Let x be the leg to Blois.\nNantes = x - 46.\nArles = (x - 46) + 47 = x + 1.\n\\boxed{x + 1}")


def test_aca_mix_is_exact_and_seeded(items):
    twins = [i for i in items if i.label == "unanswerable"]
    mix = parse_aca_mix("ELICIT=0.4,COND=0.3,ABS=0.3")
    choice = assign_aca(twins, mix, seed=5)
    assert Counter(choice.values()) == {"ELICIT": 400, "COND": 300, "ABS": 300}
    assert choice == assign_aca(twins, mix, seed=5) and choice != assign_aca(twins, mix, seed=6)
    with pytest.raises(ValueError, match="BEHAVIOR=SHARE"):
        parse_aca_mix("ELICIT=0.5,GUESS=0.5")


def test_a_failing_target_is_an_error_or_dropped_and_counted():
    wrong_reference = Item(id="bad-ref", question="a is 3; b is a + 2. What is b?", answers=["6"], label="answerable",
                           graph={"variables": ["a", "b"], "equations": ["a = 3", "b = a + 2"], "target": "b"})
    # a clarify target for a gap the clarification rules cannot read ("a" is no word): not confirmed
    unreadable = Item(id="no-words", question="b is a + 2. What is b?", answers=[], label="unanswerable",
                      gap="The problem never states a.", gap_variable="a",
                      graph={"variables": ["a", "b"], "equations": ["b = a + 2"], "target": "b"})
    good = make_pair(seed=3, index=1, operator="relationship_removal").twin
    with pytest.raises(ValueError, match="item bad-ref: the graph gives 5"):
        build_sft([wrong_reference, good], SFTConfig(protocol="clarify"))
    with pytest.raises(ValueError, match="no-words: clarify target fails the self-check: clarification_correct"):
        build_sft([unreadable, good], SFTConfig(protocol="clarify"))
    built = build_sft([wrong_reference, unreadable, good], SFTConfig(protocol="clarify", on_fail="drop"))
    assert [r.id for r in built.rows] == [good.id]
    assert [i for i, _ in built.dropped] == ["bad-ref", "no-words"]


def test_items_without_a_graph():
    gsm = load_benchmark("gsm8k")[0]
    with pytest.raises(ValueError, match=f"item {gsm.id}: it has no graph"):
        build_target(gsm, "idk")
    built = build_sft([gsm], SFTConfig(protocol="idk", targets=TargetConfig(no_graph="plain")))
    assert built.rows[0].completion[0]["content"].endswith("\\boxed{18}")


def test_unknown_protocol_and_options_are_refused():
    with pytest.raises(ValueError, match="answer_only.*has no SFT targets"):
        SFTConfig(protocol="answer_only")
    with pytest.raises(ValueError, match="verbosity must be short, normal or long"):
        TargetConfig(verbosity="tiny")  # type: ignore[arg-type]


def test_cli_writes_rows_and_prints_counts(tmp_path):
    items_path = tmp_path / "items.jsonl"
    synth = CliRunner().invoke(app, ["synth", "--kind", "missing-premise", "--n", "24", "--seed", "2",
                                     "--out", str(items_path)])
    assert synth.exit_code == 0, synth.output
    out = tmp_path / "sft.jsonl"
    result = CliRunner().invoke(app, ["sft-data", "--data", str(items_path), "--protocol", "aca", "--aca-mix",
                                      "ELICIT=0.5,ABS=0.5", "--out", str(out), "--no-tokens"])
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out, SFTRow)
    assert Counter(r.target_kind for r in rows) == {"answer": 12, "elicit": 6, "abs": 6}
    assert "elicit" in result.output and "wrote 24 rows" in " ".join(result.output.split())
    mixed = CliRunner().invoke(app, ["sft-data", "--synth", "30", "--protocol", "idk", "--out", str(out),
                                     "--no-tokens"])
    assert mixed.exit_code == 0, mixed.output
    # 30 rows: 3 hard (10%), 27 missing-premise rows of which round(0.3 * 27) = 8 twins
    assert Counter((r.label, r.category) for r in read_jsonl(out, SFTRow)) == {
        ("answerable", "reasoning"): 19, ("unanswerable", "reasoning"): 8, ("answerable", "hard"): 3}
    bad = CliRunner().invoke(app, ["sft-data", "--synth", "10", "--seed", "90417", "--protocol", "idk",
                                   "--out", str(out)])
    assert bad.exit_code == 2 and "reserved for the held-out benchmark" in bad.output


@pytest.mark.slow
def test_targets_are_short_in_smollm2_tokens(bundled_model_dir):
    """The trained model must decide within a small budget: typical targets of the mix stay <= 90 tokens."""
    from transformers import AutoTokenizer

    from abstain.train.data.mix import MixConfig, build_training_mix
    from abstain.train.data.sft_data import length_summary, token_lengths

    tokenizer = AutoTokenizer.from_pretrained(bundled_model_dir)
    built = build_training_mix(MixConfig(n=300, seed=2), SFTConfig(protocol="attribution"))
    lengths = token_lengths([r.completion[0]["content"] for r in built.rows], tokenizer)
    by_label = {label: length_summary([n for n, r in zip(lengths, built.rows) if r.label == label])
                for label in ("answerable", "unanswerable")}
    assert by_label["answerable"]["median"] <= 90 and by_label["unanswerable"]["median"] <= 90, by_label
    assert max(lengths) <= 200
