"""The stated-answer rule: a numeric reference is compared with the answer a response states, never with an echo.

The adversarial table goes through the real entry point, ``abstain score``, strict and lenient; each row says what
a referee would rule. Then the rewards (TRL's calling convention and veRL's ``compute_score``), the consistency
estimator, and real samples of the bundled model (``tests/fixtures/echo_samples.jsonl``).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.confidence.consistency import agreement
from abstain.integrations.verl.dataset import verl_row
from abstain.integrations.verl.reward import compute_score
from abstain.judges import AnswerConfig, JudgeConfig, check_answer
from abstain.judges.stated import stated_answer
from abstain.schema import Item, ResponseRow, read_jsonl
from abstain.train.rewards.presets import make_reward

# (response, reference, strict, lenient, what a referee says). strict: only a \boxed{} answer counts.
TABLE: list[tuple[str, str, bool, bool, str]] = [
    # the table
    ("Lemme try. What does 70 + 61 =?", "131", False, False, "an echo of the question with an empty '='"),
    ("I promise! NASA has sent a distress message to 93+59, stopping communication.", "152", False, False,
     "the question's sum, unevaluated, inside nonsense"),
    ("528 * 901 ≈ 25817\nThe answer is: 25817", "475728", False, False, "the stated answer is wrong"),
    ("Tom has 4 + 5 apples now.", "9", False, False, "an expression is not a computed answer"),
    ("7 + 8", "15", False, False, "the bare question"),
    ("\\boxed{93+59}", "152", False, False, "a boxed expression: not a computed answer"),
    ("2 + 2 = 5", "4", False, False, "the equation states 5"),
    # echoes and expressions
    ("\\boxed{4 + 5}", "9", False, False, "boxed echo"),
    ("\\boxed{2^{10}}", "1024", False, False, "a power left unevaluated"),
    ("\\boxed{\\sqrt{16}}", "4", False, False, "a root left unevaluated"),
    ("Tom has 4 plus 5 apples.", "9", False, False, "an echo in words"),
    ("x = 4 + 5", "9", False, False, "the right-hand side is an expression"),
    ("$93+59$", "152", False, False, "an expression in LaTeX delimiters"),
    # wrong stated answers beside true expressions
    ("4 + 5 makes nine, so the answer is 8.", "9", False, False, "it states 8"),
    ("We need 4 + 5. \\boxed{8}", "9", False, False, "the box says 8"),
    ("4 + 5 = 9, the answer is \\boxed{10}", "9", False, False, "the box decides"),
    # chains of equalities
    ("4 + 5 = 9", "9", False, True, "a chain ending right (unboxed)"),
    ("\\boxed{4 + 5 = 9}", "9", True, True, "a chain ending right, in the box"),
    ("4 + 5 = 9 = 10", "9", False, False, "a chain ending wrong"),
    ("\\boxed{93 + 59 = 142}", "152", False, False, "a boxed chain ending wrong"),
    ("6 + 2 = 9? No. The answer is 8.", "8", False, True, "a wrong step, then the stated answer"),
    ("The answer is 4 + 5 = 9.", "9", False, True, "the answer marker, then a chain ending right"),
    # units, percentages, separators, signs, fractions
    ("\\boxed{12 \\text{ apples}}", "12", True, True, "a unit in the box"),
    ("The answer is $1,200.", "1200", False, True, "currency and a thousands separator"),
    ("\\boxed{25\\%}", "25%", True, True, "a percentage"),
    ("The discount is 25%.", "25", False, True, "a percentage in words around it"),
    ("5 - 8 = -3", "-3", False, True, "a negative result"),
    ("\\boxed{-3}", "-3", True, True, "a negative number"),
    ("\\boxed{\\frac{3}{4}}", "0.75", True, True, "a fraction equals its decimal"),
    ("\\boxed{2.50}", "2.5", True, True, "trailing zeros"),
    ("The angle is 90^\\circ.", "90", False, True, "degrees"),
    # a correct answer in words around it
    ("So Tom has 9 apples now.", "9", False, True, "the last number is stated in a sentence"),
    ("Tom has \\boxed{9} apples.", "9", True, True, "boxed inside a sentence"),
    ("Answer: **9**", "9", False, True, "a markdown-bold answer"),
    ("I'm not sure, maybe nine.", "9", False, False, "a number in words is not read"),
    # symbolic and text references keep Math-Verify and normalized match
    ("\\boxed{\\frac{\\pi}{2}}", "\\pi/2", True, True, "symbolic: Math-Verify's equivalence"),
    ("\\boxed{x^2+2x+1}", "(x+1)^2", True, True, "an expression with a variable: Math-Verify"),
    ("\\boxed{The Beatles}", "Beatles", True, True, "text: SQuAD-style match"),
]


def _rows(table) -> list[dict]:
    return [{"id": f"t{i}", "question": "What is the result?", "answers": [ref], "label": "answerable",
             "response": response, "model": "adversarial"} for i, (response, ref, *_) in enumerate(table)]


def _score(tmp_path, rows, *flags) -> list[dict]:
    src, out = tmp_path / "rows.jsonl", tmp_path / f"scored{len(flags)}{'-'.join(flags)}.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(app, ["score", "-i", str(src), "-o", str(out), "--behaviors", "none", *flags])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> dict[str, list[dict]]:
    tmp = tmp_path_factory.mktemp("stated")
    rows = _rows(TABLE)
    return {"strict": _score(tmp, rows), "lenient": _score(tmp, rows, "--lenient-format"),
            "authors": _score(tmp, rows, "--lenient-format", "--answer-match", "math_verify")}


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_the_adversarial_table_through_abstain_score(scored, mode):
    wrong = []
    for (response, ref, strict, lenient, why), row in zip(TABLE, scored[mode], strict=True):
        expected = strict if mode == "strict" else lenient
        if row["correct"] is not expected:
            wrong.append(f"{response!r} vs {ref}: judged {row['correct']}, a referee says {expected} ({why})")
    assert not wrong, "\n".join(wrong)


def test_the_authors_rule_credits_the_echoes_the_stated_rule_refuses(scored):
    """``--answer-match math_verify`` is the old rule (Abstain-R1's reward): it credits the issue's echoes."""
    credited = {TABLE[i][0] for i, row in enumerate(scored["authors"]) if row["correct"]}
    for echo in ("Tom has 4 + 5 apples now.", "7 + 8", "\\boxed{93+59}", "Lemme try. What does 70 + 61 =?"):
        assert echo in credited
        assert not scored["lenient"][[t[0] for t in TABLE].index(echo)]["correct"]


def test_a_judge_config_names_an_unknown_rule():
    with pytest.raises(ValueError, match="answer_match must be one of stated, math_verify"):
        JudgeConfig(answer_match="echo")
    result = CliRunner().invoke(app, ["score", "-i", "x.jsonl", "-o", "y.jsonl", "--answer-match", "loose"])
    assert result.exit_code != 0 and "answer_match" in result.output


def test_stated_answer_reads_the_final_statement():
    assert stated_answer("528 * 901 ≈ 25817\nThe answer is: 25817").text == "25817"
    assert stated_answer("So 3 + 2 = 5 and Tom is happy.").text == "5"  # the last '=' wins over a later word
    assert stated_answer("He read over 5 books").text == "5"  # a word operator with nothing before it
    assert stated_answer("The answer is -12 degrees, since 3 - 15 = -12.").text == "-12"
    assert stated_answer("What does 70 + 61 =?").kind == "expression"
    assert stated_answer("I don't know").kind == "none"
    assert check_answer("93+59", ["152"], AnswerConfig(match="math_verify"))
    assert not check_answer("93+59", ["152"])


# ---- rewards: an echo earns what a wrong answer earns ----------------------------------------------------------

ITEM = {"id": "q", "question": "What is 93 + 59?", "answers": ["152"], "label": "answerable"}
ECHOES = ["93 + 59", "\\boxed{93+59}", "The sum 93+59 is what we need.", "93 + 59 ="]
RIGHT, WRONG = "93 + 59 = \\boxed{152}", "\\boxed{142}"


def _trl_values(preset: str, texts: list[str], **config) -> list[float | None]:
    reward = make_reward(preset, **config)
    return reward(prompts=[None] * len(texts), completions=[[{"role": "assistant", "content": t}] for t in texts],
                  **{k: [v] * len(texts) for k, v in ITEM.items()})


@pytest.mark.parametrize("preset", ["ternary", "ternary_ook", "idk_binary", "rl_ua", "aca"])
@pytest.mark.parametrize("lenient", [False, True])
def test_an_echo_earns_what_a_wrong_answer_earns(preset, lenient):
    judge = JudgeConfig(lenient_format=lenient)
    right, wrong, *echoes = _trl_values(preset, [RIGHT, WRONG, *ECHOES], judge=judge)
    assert right > wrong
    assert echoes == [wrong] * len(ECHOES), (preset, lenient, echoes)


def test_abstain_r1_keeps_its_authors_rule_and_the_corrected_judge_credits_no_echo():
    tagged = [f"<thinking>I add.</thinking>\n<answer>{t}</answer>" for t in ("\\boxed{93+59}", "93 + 59", "\\boxed{142}")]
    # the authors' reward (Math-Verify over the answer section): the echoes earn r_answer 1, as in sum_reward.py
    assert _trl_values("abstain_r1", tagged) == [2.0, 1.0, 1.0]
    # the corrected judge beside it: r_format alone
    assert _trl_values("abstain_r1", tagged, judge=JudgeConfig(lenient_format=True)) == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("preset", ["ternary", "idk_binary"])
def test_verl_compute_score_gives_an_echo_nothing(preset):
    row = verl_row(Item.model_validate(ITEM), "idk", index=0)
    scores = [compute_score(row["data_source"], text, row["reward_model"]["ground_truth"], row["extra_info"],
                            preset=preset)["score"] for text in [WRONG, *ECHOES]]
    assert scores == [scores[0]] * len(scores) and scores[0] == {"ternary": -1.0, "idk_binary": 0.0}[preset]


# ---- confidence: consistency compares stated answers ------------------------------------------------------------

def test_consistency_counts_no_agreement_between_echoes():
    echoes = ["93 + 59", "The sum is 93+59.", "\\boxed{93+59}"]
    assert agreement("93+59", echoes, references=["152"]) == 0.0
    assert agreement("93 + 59 = 152", ["152", "\\boxed{152}", "93+59", "142"], references=["152"]) == 0.5
    # without references (an unanswerable twin), the rule judge's equivalence as before
    assert agreement("\\boxed{5}", ["\\boxed{5.0}", "\\boxed{6}"]) == 0.5


# ---- real samples of the bundled model ---------------------------------------------------------------------------

def test_real_bundled_samples_that_echo_are_judged_wrong(fixtures_dir, tmp_path):
    """Samples of SmolLM2-135M on bare sums (``abstain probe --lenient-format``, temperature 1): the echoes and
    the stated answers, each labelled by reading (``label_correct``), judged as labelled under the stated rule."""
    rows = read_jsonl(fixtures_dir / "echo_samples.jsonl", ResponseRow)
    labels = [r.model_extra["label_correct"] for r in rows]
    assert sum(labels) >= 3 and len(labels) - sum(labels) >= 5
    scored = _score(tmp_path, [r.model_dump(mode="json", exclude_none=True) for r in rows], "--lenient-format")
    assert [row["correct"] for row in scored] == labels
    old = _score(tmp_path, [r.model_dump(mode="json", exclude_none=True) for r in rows], "--lenient-format",
                 "--answer-match", "math_verify")
    assert sum(row["correct"] for row in old) > sum(labels)  # the old rule credited some of these echoes


def test_every_numeric_reference_of_the_shipped_benchmarks_is_read_back_when_stated():
    """7,500 plain-number references (GSM8K, MATH-500's `10,\\!080`, SelfAware's `1e9`, MediQ's `3/4` ...) each
    match themselves stated four ways: the stated-answer rule loses no right answer the old reading credited."""
    from abstain.data import load_benchmark
    from abstain.data.loaders import BENCHMARKS
    from abstain.judges import numeric_value

    missed, count = [], 0
    for name in BENCHMARKS:
        for item in load_benchmark(name):
            for ref in (a for a in item.answers if numeric_value(a) is not None):
                count += 1
                missed += [(name, form) for form in (ref, f"The answer is {ref}.", f"So we get {ref}.", f"x = {ref}")
                           if not check_answer(form, [ref])]
    assert count > 7000 and not missed, missed[:10]
