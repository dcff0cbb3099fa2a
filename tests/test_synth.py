"""Synthesis: certified missing-premise pairs, hard variants, the held-out file and ``abstain synth``.

Every emitted row is re-checked with sympy (:func:`abstain.synth.verify.verify_item`), which shares no
code with the generator's exact certificates; the text of every twin is checked against its graph.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
import sympy
from typer.testing import CliRunner

from abstain.cli import app
from abstain.schema import Item, dump_row, read_jsonl
from abstain.synth import (
    HELDOUT_SEED,
    OPERATORS,
    HardConfig,
    SynthConfig,
    build_heldout,
    certify_answerable,
    certify_unanswerable,
    generate_missing_premise,
    heldout_file,
    verify_item,
)
from abstain.synth.exact import parse_relation, reduce_system

runner = CliRunner()


def flat(text: str) -> str:
    """CLI output with rich's line wrapping undone."""
    return " ".join(text.split())
VAGUE = re.compile(r"\b(more|fewer|less|older|younger|longer|shorter|cheaper|few times|fraction|little)\b")
QUALIFIERS = re.compile(r"\b(at least|about|no more than|no older than|some of)\b")


@pytest.fixture(scope="session")
def cli_rows(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    out = tmp_path_factory.mktemp("synth") / "x.jsonl"
    result = runner.invoke(app, ["synth", "--kind", "missing-premise", "--n", "300", "--seed", "11", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, [json.loads(line) for line in out.read_text().splitlines()]


@pytest.fixture(scope="session")
def heldout_rows() -> list[dict]:
    return [json.loads(line) for line in heldout_file().read_text().splitlines()]


def check_pair_text(original: dict, twin: dict) -> None:
    """The twin's text says what its graph says: one sentence changed, the premise really gone."""
    meta = twin["meta"]
    before, after = meta["original_sentence"], meta["perturbed_sentence"]
    assert before in original["question"] and before not in twin["question"]
    assert after in twin["question"] and after != before
    assert original["question"].replace(before, after, 1) == twin["question"]
    removed = set(original["graph"]["equations"]) - set(twin["graph"]["equations"])
    added = set(twin["graph"]["equations"]) - set(original["graph"]["equations"])
    assert len(removed) == 1, removed
    (gone,) = removed
    gap_var, entity = twin["gap_variable"], meta["gap_entity"]
    assert gone.split("=")[0].strip() == gap_var
    assert re.search(rf"\b{re.escape(entity)}\b", before, re.IGNORECASE)
    assert entity.lower() in twin["gap"].lower()
    numbers_before = set(re.findall(r"\d+", before))
    kind = twin["perturbation"]
    if kind in ("numerical_value_removal", "relationship_removal", "relationship_unquantifiable_replacement"):
        lost = numbers_before - set(re.findall(r"\d+", after))
        if meta["form"] in ("rate_no_n", "rate_no_m"):  # one factor of a product is dropped
            assert len(lost) == 1 and len(numbers_before) == 2, (before, after)
        else:  # every number of the condition is gone from it ...
            assert lost == numbers_before, (before, after)
        for n in lost:  # ... and from the whole twin
            assert not re.search(rf"(?<!\d){n}(?!\d)", twin["question"]), (n, twin["question"])
        assert not added
    if kind == "relationship_unquantifiable_replacement":
        assert VAGUE.search(after) and twin["graph"]["constraints"]
    if kind == "entity_disruption":
        (new_eq,) = added
        new_var = new_eq.split("=")[0].strip()
        assert new_var not in original["graph"]["variables"] and new_var in twin["graph"]["variables"]
        assert new_eq.split("=")[1] == gone.split("=")[1]  # the same fact ...
        other = meta["replacement_entity"]  # ... about a different entity
        assert re.search(rf"\b{re.escape(other)}\b", after) and not re.search(rf"\b{re.escape(entity)}\b", after)
        assert not re.search(rf"\b{re.escape(other)}\b", original["question"])
    if kind == "qualifier_disruption":
        assert QUALIFIERS.search(after) and twin["graph"]["constraints"]
    if kind == "condition_contraction":
        assert twin["graph"]["constraints"] and all(">=" in c for c in twin["graph"]["constraints"])
    if kind in ("qualifier_disruption", "condition_contraction"):
        assert not added


def check_rows(rows: list[dict]) -> None:
    by_id = {r["id"]: r for r in rows}
    assert len(by_id) == len(rows)
    for row in rows:
        Item.model_validate(row)
        problems = verify_item(row)
        assert problems == [], (row["id"], problems)
        if row["label"] == "unanswerable":
            assert row["answers"] == [] and row["gap"] and row["perturbation"] in OPERATORS
            assert row["gap_variable"] in row["graph"]["variables"]
            check_pair_text(by_id[f"{row['pair_id']}-a"], row)
        else:
            assert row["graph"]["constraints"] == [] and len(row["answers"]) == 1


def test_cli_writes_300_certified_rows_with_all_six_perturbations(cli_rows: tuple[Path, list[dict]]) -> None:
    path, rows = cli_rows
    assert len(rows) == 300 and len(read_jsonl(path, Item)) == 300
    counts = Counter(r["perturbation"] for r in rows if r["label"] == "unanswerable")
    assert set(counts) == set(OPERATORS) and min(counts.values()) == 25
    assert Counter(r["pair_id"] for r in rows) == Counter({r["pair_id"]: 2 for r in rows})
    assert len({r["theme"] for r in rows}) >= 6 and {r["depth"] for r in rows} == {2, 3, 4}
    assert all(r["source"] == "synth/missing-premise" and r["category"] == "reasoning" for r in rows)
    check_rows(rows)


def test_same_seed_same_bytes_other_seed_other_problems(cli_rows: tuple[Path, list[dict]], tmp_path: Path) -> None:
    path, rows = cli_rows
    again = tmp_path / "again.jsonl"
    assert runner.invoke(app, ["synth", "--kind", "missing-premise", "--n", "300", "--seed", "11",
                               "--out", str(again)]).exit_code == 0
    assert again.read_bytes() == path.read_bytes()
    other = list(generate_missing_premise(SynthConfig(n=40, seed=12)))
    assert not {r.question for r in other} & {r["question"] for r in rows}


def test_heldout_file_is_certified_complete_and_regenerates(heldout_rows: list[dict]) -> None:
    assert len(heldout_rows) >= 600
    twins = Counter(r["perturbation"] for r in heldout_rows if r["label"] == "unanswerable")
    assert set(twins) == set(OPERATORS) and min(twins.values()) >= 50
    hard = [r for r in heldout_rows if r["category"] == "hard"]
    assert len(hard) >= 100 and all(r["label"] == "answerable" and r["depth"] >= 6 for r in hard)
    check_rows(heldout_rows)
    # the documented command rebuilds it byte for byte
    assert "".join(dump_row(r) + "\n" for r in build_heldout()) == heldout_file().read_text()


def test_heldout_seed_is_refused_and_training_mix_avoids_heldout(heldout_rows: list[dict], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="reserved for the held-out"):
        SynthConfig(n=10, seed=HELDOUT_SEED)
    with pytest.raises(ValueError, match="reserved for the held-out"):
        HardConfig(n=10, seed=HELDOUT_SEED)
    result = runner.invoke(app, ["synth", "--kind", "missing-premise", "--n", "10", "--seed", str(HELDOUT_SEED),
                                 "--out", str(tmp_path / "no.jsonl")])
    assert result.exit_code == 2 and "reserved" in flat(result.output) and not (tmp_path / "no.jsonl").exists()
    # a training generator told to exclude the held-out texts draws those slots again
    questions = frozenset(r["question"] for r in heldout_rows[:12])
    cfg = SynthConfig(n=12, seed=HELDOUT_SEED, allow_heldout_seed=True, exclude_questions=questions)
    assert not {r.question for r in generate_missing_premise(cfg)} & questions


def test_unanswerable_ratio_mixes_one_row_per_problem(tmp_path: Path) -> None:
    out = tmp_path / "mix.jsonl"
    result = runner.invoke(app, ["synth", "--kind", "missing-premise", "--n", "60", "--seed", "5",
                                 "--unanswerable-ratio", "0.3", "--themes", "ages,travel", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert Counter(r["label"] for r in rows) == {"answerable": 42, "unanswerable": 18}
    assert len({r["pair_id"] for r in rows}) == 60 and {r["theme"] for r in rows} == {"ages", "travel"}
    assert Counter(r["perturbation"] for r in rows if r["perturbation"]) == dict.fromkeys(OPERATORS, 3)
    assert all(not verify_item(r) for r in rows)


def test_hard_variants_are_harder_and_certified(tmp_path: Path) -> None:
    out = tmp_path / "hard.jsonl"
    assert runner.invoke(app, ["synth", "--kind", "hard", "--n", "30", "--seed", "4", "--out", str(out)]).exit_code == 0
    hard = [json.loads(line) for line in out.read_text().splitlines()]
    easy = [r.model_dump() for r in generate_missing_premise(SynthConfig(n=30, seed=4)) if r.label == "answerable"]
    assert all(r["category"] == "hard" and r["label"] == "answerable" and r["source"] == "synth/hard" for r in hard)
    assert all(not verify_item(r) for r in hard)
    mean = lambda rows, f: sum(map(f, rows)) / len(rows)  # noqa: E731
    assert mean(hard, lambda r: len(r["graph"]["variables"])) > 2 * mean(easy, lambda r: len(r["graph"]["variables"]))
    assert mean(hard, lambda r: r["depth"]) >= 6 > mean(easy, lambda r: r["depth"])
    median = lambda values: sorted(values)[len(values) // 2]  # noqa: E731
    assert median([int(r["answers"][0]) for r in hard]) > 5 * median([int(r["answers"][0]) for r in easy])
    assert all(r["theme"] != "ages" for r in hard)


def test_cli_input_errors_are_clear(tmp_path: Path) -> None:
    bad = runner.invoke(app, ["synth", "--kind", "nope", "--n", "3", "--out", str(tmp_path / "a.jsonl")])
    assert bad.exit_code == 2 and "--kind must be one of" in flat(bad.output)
    themes = runner.invoke(app, ["synth", "--kind", "missing-premise", "--n", "3", "--themes", "space",
                                 "--out", str(tmp_path / "b.jsonl")])
    assert themes.exit_code == 2 and "unknown themes ['space']" in flat(themes.output)
    hard = runner.invoke(app, ["synth", "--kind", "hard", "--n", "3", "--unanswerable-ratio", "0.3",
                               "--out", str(tmp_path / "c.jsonl")])
    assert hard.exit_code == 2 and not list(tmp_path.iterdir())


# ---- the exact fast path against sympy, and certificates that must fail -------------------------


def test_exact_reduction_agrees_with_sympy_on_random_systems() -> None:
    rng = random.Random(0)
    names = ["a", "b", "c", "d", "e"]
    symbols = sympy.symbols(names)
    for _ in range(150):
        equations = []
        for _ in range(rng.randint(1, 5)):
            terms = [f"{rng.randint(-3, 3)}*{v}" for v in rng.sample(names, rng.randint(1, 3))]
            divisor = rng.choice(["", "/2", "/3"])
            equations.append(f"{' + '.join(terms)}{divisor} = {rng.randint(-9, 9)}")
        system = reduce_system([parse_relation(e) for e in equations], order=names)
        sides = [[sympy.sympify(side, locals=dict(zip(names, symbols))) for side in e.split("=")] for e in equations]
        sym_eqs = [lhs - rhs for lhs, rhs in sides]
        solutions = sympy.linsolve(sym_eqs, symbols)
        assert system.consistent == (solutions != sympy.EmptySet), equations
        if not system.consistent:
            continue
        (solution,) = solutions
        for name, expr in zip(names, solution):
            assert system.determined(name) == (not expr.free_symbols), (equations, name)
            if system.determined(name):
                assert Fraction(str(expr)) == system.value_of(name)


def test_certificates_refuse_what_is_not_so() -> None:
    graph = {"variables": ["a", "b"], "equations": ["a = b + 3"], "constraints": ["b >= 2", "b <= 2"], "target": "a"}
    assert not certify_unanswerable(graph, {"a": 5, "b": 2}).ok  # the constraints pin the target
    assert verify_item({"label": "unanswerable", "answers": [], "graph": graph})
    graph["constraints"] = ["b > 1", "b < 3"]  # one integer only: no two integer witnesses
    assert not certify_unanswerable(graph, {"a": 5, "b": 2}).ok
    determined = {"variables": ["a", "b"], "equations": ["a = 2*b", "b = 4"], "constraints": [], "target": "a"}
    assert certify_answerable(determined, "8").ok and not certify_answerable(determined, "9").ok
    assert not certify_unanswerable(determined).ok
    free_other = {"variables": ["a", "b", "c"], "equations": ["a - c = 1", "c = 2", "b - b = 0"], "constraints": [],
                  "target": "a"}
    assert certify_answerable(free_other, "3", require_all=False).ok  # b is free, a is still determined
    assert not certify_answerable(free_other, "3").ok
    nonlinear = certify_answerable({**determined, "equations": ["a = b*b", "b = 4"]}, "16")
    assert not nonlinear.ok and "not linear" in nonlinear.reason
    assert verify_item({"label": "answerable", "answers": ["16"],
                        "graph": {**determined, "equations": ["a = b*b", "b = 4"]}})


def test_sympy_check_catches_tampered_items(cli_rows: tuple[Path, list[dict]]) -> None:
    _, rows = cli_rows
    original, twin = rows[0], rows[1]
    wrong_answer = {**original, "answers": [str(int(original["answers"][0]) + 1)]}
    assert verify_item(wrong_answer)
    restored = {**twin, "graph": {**twin["graph"], "equations": original["graph"]["equations"],
                                  "constraints": [], "variables": original["graph"]["variables"]}}
    assert any("determined" in p for p in verify_item(restored))
    bad_witness = {**twin, "meta": {**twin["meta"], "witnesses": [twin["meta"]["witnesses"][0]] * 2}}
    assert verify_item(bad_witness) == ["the witnesses do not give two different target values"]


def test_heldout_is_a_suite_of_the_evaluation_runner(heldout_rows: list[dict]) -> None:
    from abstain.data.suites import load_suite

    suite = load_suite("heldout")
    assert [i.id for i in suite.items] == [r["id"] for r in heldout_rows]
    small = load_suite("heldout", limit=24, seed=0)
    assert {i.perturbation for i in small.items if i.label == "unanswerable"} == set(OPERATORS)


def test_the_documented_examples_are_real_generator_output(cli_rows: tuple[Path, list[dict]]) -> None:
    section = (Path(__file__).resolve().parents[1] / "docs" / "synthesis.md").read_text(encoding="utf-8")
    text = " ".join(section.replace("\n>", "\n").split())
    _, rows = cli_rows
    by_id = {r["id"]: r for r in rows}
    for pair in ("synth-mp-s11-00000", "synth-mp-s11-00044", "synth-mp-s11-00069"):
        original, twin = by_id[f"{pair}-a"], by_id[f"{pair}-u"]
        assert original["question"] in text and twin["gap"] in text
        assert f"(answer {original['answers'][0]})" in text and f"(`{twin['perturbation']}`)" in text
    first = by_id["synth-mp-s11-00000-u"]
    assert first["question"] in text and json.dumps(first["graph"]) in text
