"""Reward presets: every branch by hand, the TRL calling convention, and a fuzz test that they never raise."""

from __future__ import annotations

import math
import random

import pytest

from abstain.judges import JudgeConfig
from abstain.metrics import MetricsConfig, compute_metrics
from abstain.outcomes import outcome
from abstain.train.rewards.presets import PRESETS, SCORED_COLUMN, items_from_columns, make_reward, score_one

ANS = {"id": "a", "question": "Tom has 3 apples and buys 2 more. How many apples does he have?",
       "answers": ["5"], "label": "answerable", "category": "reasoning"}
HARD = {**ANS, "id": "h", "category": "hard"}
UNANS = {"id": "u", "question": "Tom has some apples and buys 2 more. How many apples does he have?",
         "answers": [], "label": "unanswerable", "category": "reasoning",
         "gap": "The problem never states how many apples Tom has at first.", "gap_variable": "tom_apples"}

RIGHT = "3 + 2 = \\boxed{5}"
WRONG = "3 + 2 = \\boxed{6}"
NO_BOX = "He has 5 apples."
IDK = "I cannot tell. \\boxed{I don't know.}"
DU = "A number is missing. \\boxed{<DATA_UNCERTAIN>}"
MU = "This is beyond me. \\boxed{<MODEL_UNCERTAIN>}"
ASK = "\\boxed{How many apples does Tom have at first?}"
COND = "Let x be Tom's apples at first. \\boxed{x + 2}"
EA = "Assuming Tom has 3 apples at first, \\boxed{5}"


def value(preset: str, item: dict, text: str, **config) -> float | None:
    return score_one(preset, item, text, **config).score


@pytest.mark.parametrize(("item", "text", "expected"), [
    (ANS, RIGHT, 1.0), (ANS, WRONG, -1.0), (ANS, NO_BOX, -1.0), (ANS, IDK, 0.0), (ANS, DU, 0.0),
    (ANS, ASK, 0.0),  # asking on an answerable item is an abstention (behaviors are judged on every row)
    (UNANS, RIGHT, -1.0), (UNANS, EA, -1.0), (UNANS, IDK, 0.0), (UNANS, ASK, 0.0), (UNANS, COND, 0.0),
])
def test_ternary(item, text, expected):
    assert value("ternary", item, text, judge=JudgeConfig(behaviors="all")) == expected


@pytest.mark.parametrize(("item", "text", "expected"), [
    (ANS, RIGHT, 1.0), (ANS, WRONG, -1.0), (ANS, IDK, 0.0), (UNANS, IDK, 1.0), (UNANS, COND, 1.0),
    (UNANS, RIGHT, -1.0),
])
def test_ternary_ook(item, text, expected):
    assert value("ternary_ook", item, text) == expected


@pytest.mark.parametrize(("item", "text", "expected"), [
    (ANS, RIGHT, 1.0), (ANS, MU, 0.0), (ANS, IDK, 0.0), (ANS, WRONG, -1.0), (ANS, DU, -1.0), (ANS, NO_BOX, -1.0),
    (HARD, RIGHT, 1.0), (HARD, MU, 1.0), (HARD, WRONG, -1.0), (HARD, DU, -1.0),
    (UNANS, DU, 1.0), (UNANS, MU, -1.0), (UNANS, RIGHT, -1.0), (UNANS, ASK, -1.0),
])
def test_rl_ua(item, text, expected):
    assert value("rl_ua", item, text) == expected


@pytest.mark.parametrize(("item", "text", "expected"), [
    (UNANS, ASK, 1.0), (UNANS, COND, 0.6), (UNANS, IDK, 0.3), (UNANS, EA, -0.3), (UNANS, RIGHT, -1.0),
    (UNANS, "\\boxed{I don't know.} How many apples does Tom have at first?", 1.0),  # refusal + question: ELICIT
    (ANS, RIGHT, 1.0), (ANS, IDK, 0.0), (ANS, WRONG, -1.0),
])
def test_aca(item, text, expected):
    assert value("aca", item, text) == pytest.approx(expected)


def test_aca_values_are_configurable():
    values = {"ELICIT": 1.0, "COND": 1.0, "ABS": 0.0, "EA": -1.0, "SH": -1.0}
    assert value("aca", UNANS, COND, behavior_values=values) == 1.0


def _tagged(thinking: str, answer: str) -> str:
    return f"<thinking>{thinking}</thinking>\n<answer>{answer}</answer>"


ASKS = "\\boxed{I don't know.} How many apples does Tom have at first?"
VAGUE = "\\boxed{I don't know.} Something is off with the weather."


@pytest.mark.parametrize(("item", "text", "expected"), [
    (ANS, _tagged("3 + 2 = 5", "\\boxed{5}"), 2.0),  # format 1 + correct 1
    (ANS, _tagged("3 + 2", "\\boxed{6}"), 1.0),  # format 1 + wrong 0
    (ANS, _tagged("3 + 2", "5"), 1.0),  # no box: format 0, the section judged (lenient, as the authors): 1
    (ANS, _tagged("hmm", "\\boxed{I don't know.}"), 0.0),  # format 1 + false refusal -1
    (ANS, "3 + 2 = 5</thinking>\n<answer>\\boxed{5}</answer>", 2.0),  # <thinking> prepended
    (ANS, "<thinking>a</thinking> so <answer>\\boxed{5}</answer>", 0.0),  # text between the sections
    (ANS, "<answer>\\boxed{5}</answer><thinking>a</thinking>", 0.0),  # wrong order
    (ANS, _tagged("a", "\\boxed{5}") + "<answer>x</answer>", 0.0),  # a tag twice
    (UNANS, _tagged("The count is missing.", ASKS), 2.0),  # format 1 + 0.3 + 0.7
    (UNANS, _tagged("Something is missing.", VAGUE), 1.3),  # clarification judged wrong
    (UNANS, _tagged("It is 5.", "\\boxed{5}"), 1.0),  # answered an unanswerable item
])
def test_abstain_r1(item, text, expected):
    assert value("abstain_r1", item, text) == pytest.approx(expected)


def test_abstain_r1_penalty_and_weights_are_configurable():
    refused = _tagged("hmm", "\\boxed{I don't know.}")
    assert value("abstain_r1", ANS, refused, false_refusal_penalty=-0.5) == pytest.approx(0.5)
    assert value("abstain_r1", ANS, refused, false_refusal_penalty=0.0) == 1.0
    assert value("abstain_r1", UNANS, _tagged("x", ASKS), format_weight=0.0, answer_weight=2.0) == pytest.approx(2.0)


def test_abstain_r1_without_a_clarification_judgment_earns_the_refusal_reward():
    free_text = {k: v for k, v in UNANS.items() if k != "gap_variable"}  # the rule judge cannot judge it
    assert value("abstain_r1", free_text, _tagged("x", ASKS)) == pytest.approx(1.3)  # format 1 + refusal 0.3


@pytest.mark.parametrize(("item", "text", "expected"), [
    (ANS, RIGHT, 1.0), (ANS, WRONG, 0.0), (ANS, IDK, 0.0), (UNANS, IDK, 1.0), (UNANS, DU, 1.0), (UNANS, RIGHT, 0.0),
    (UNANS, ASK, 0.0),  # a boxed question is not a refusal box
])
def test_idk_binary(item, text, expected):
    assert value("idk_binary", item, text) == expected


@pytest.mark.parametrize(("item", "text", "expected"), [
    (ANS, RIGHT, 1.0), (ANS, WRONG, 0.0), (ANS, IDK, 0.0), (UNANS, IDK, 0.0), (UNANS, DU, 0.0), (UNANS, RIGHT, 0.0),
])
def test_binary_rewards_only_a_correct_answer(item, text, expected):
    """TruthRL's binary baseline: refusing an unanswerable item earns what a wrong answer earns."""
    assert value("binary", item, text) == expected


@pytest.mark.parametrize(("preset", "refusal", "default", "extra"), [
    ("ternary", IDK, 0.0, 0.0), ("ternary_ook", IDK, 0.0, 0.0), ("aca", IDK, 0.0, 0.0), ("idk_binary", IDK, 0.0, 0.0),
    ("binary", IDK, 0.0, 0.0),
    ("rl_ua", MU, 0.0, 0.0), ("abstain_r1", None, -1.0, 1.0),  # abstain_r1 adds its format term (1)
])
def test_every_preset_takes_a_false_refusal_penalty(preset, refusal, default, extra):
    refusal = refusal or _tagged("hmm", "\\boxed{I don't know.}")
    assert value(preset, ANS, refusal) == pytest.approx(default + extra)  # the authors' value unless told
    assert value(preset, ANS, refusal, false_refusal_penalty=-0.6) == pytest.approx(-0.6 + extra)
    right = _tagged("3 + 2", "\\boxed{5}") if preset == "abstain_r1" else RIGHT
    assert value(preset, ANS, right, false_refusal_penalty=-0.6) == pytest.approx(1.0 + extra)  # answers untouched
    if preset != "abstain_r1":  # refusing an unanswerable item keeps its value
        unans = DU if preset == "rl_ua" else IDK
        assert value(preset, UNANS, unans, false_refusal_penalty=-0.6) == value(preset, UNANS, unans)
    assert make_reward(preset, false_refusal_penalty=-1.5).bounds[0] <= -1.5 + extra


def test_reward_profiles_give_p_star_and_the_always_abstain_margin():
    from abstain.train.rewards.profile import reward_profile

    # p* from the preset definitions (wrong -1, abstain 0 -> 0.5); answering always wins under abstain_r1
    assert {name: reward_profile(name).p_star for name in ("ternary", "ternary_ook", "rl_ua", "aca", "idk_binary")} \
        == {"ternary": 0.5, "ternary_ook": 0.5, "rl_ua": 0.5, "aca": 0.5, "idk_binary": 0.0}
    assert reward_profile("abstain_r1").p_star < 0
    # the collapse of the cpu-demo runs: ternary at p = 0.05 on a 35%-unanswerable mix prefers always-abstain
    ternary = reward_profile("ternary")
    assert ternary.margin(0.35, 0.05) == pytest.approx(0.65 * (0.05 - 0.95) - 0.35 - 0.0)
    # idk_binary (p* = 0) still collapses there: always-abstain 0.35 > always-answer 0.65 * 0.05; it takes a
    # false-refusal penalty below (0.0325 - 0.35) / 0.65 ~ -0.49 to flip the margin
    idk = reward_profile("idk_binary")
    assert idk.always_abstain(0.35) == pytest.approx(0.35) and idk.always_answer(0.35, 0.05) == pytest.approx(0.0325)
    assert reward_profile("idk_binary", false_refusal_penalty=-0.45).margin(0.35, 0.05) < 0
    assert reward_profile("idk_binary", false_refusal_penalty=-0.55).margin(0.35, 0.05) > 0
    assert idk.break_even_p(0.35) == pytest.approx((0.35 - 0.0) / 0.65)
    assert "always-abstain scores +0.350 and beats always-answer unless" in idk.report(0.35, 0.05)
    # the shipped recipe's -0.6 on its 31%-unanswerable mix: always-abstain loses even to a policy never right
    shipped = reward_profile("idk_binary", false_refusal_penalty=-0.6).report(0.3125)
    assert "always-abstain scores -0.100 and always-answer beats it at every accuracy" in shipped
    assert "unless" not in shipped


def test_the_mix_profile_leaves_problems_beyond_the_policy_out_of_the_margin():
    """rl_ua pays MODEL_UNCERTAIN on a problem the policy never solved (p-hat 0): refusing it is no false refusal,
    so the always-abstain warning is about the other answerable items only; a reward blind to the probe keeps
    them all (the issue-30 GRPO stage: every answerable problem at p-hat 0)."""
    from types import SimpleNamespace

    from abstain.train.rewards.profile import mix_profile, reward_profile

    def mix(*p_hats):
        return [SimpleNamespace(label="answerable", meta={} if p is None else {"p_hat": p}) for p in p_hats] + \
            [SimpleNamespace(label="unanswerable", meta={}) for _ in p_hats]

    every = mix_profile(make_reward("rl_ua", false_refusal_penalty=-0.6), mix(0.0, 0.0, 0.0, 0.0))
    assert (every.beyond, every.margin, every.collapses, every.beyond_refusal) == (4, None, False, "<MODEL_UNCERTAIN>")
    assert "refusing everywhere is what this reward asks for" in every.report()
    assert every.to_json()["beyond_policy"] == 4 and every.to_json()["margin_at_probed_p"] is None
    # two beyond, two at p-hat 0.5: the margin is over those two and the four unanswerable (u = 2/3)
    part = mix_profile(make_reward("rl_ua"), mix(0.0, 0.0, 0.5, 0.5))
    assert (part.beyond, part.unanswerable_share, part.probed_p) == (2, pytest.approx(2 / 3), 0.5)
    assert part.margin == pytest.approx(reward_profile("rl_ua").margin(2 / 3, 0.5))
    assert part.report().startswith("2 of 4 answerable items are beyond the policy")
    # ternary does not read the probe: every item stays, and always-abstain wins at p = 0
    blind = mix_profile(make_reward("ternary"), mix(0.0, 0.0, 0.0, 0.0))
    assert (blind.beyond, blind.unanswerable_share, blind.collapses) == (0, 0.5, True)
    # nothing probed: the margin at p = 0.05, as the warning says
    assert mix_profile(make_reward("ternary"), mix(None, None)).margin == pytest.approx(
        reward_profile("ternary").margin(0.5, 0.05))


def test_judge_errors_are_none_never_a_number():
    tower = {**ANS, "answers": ["\\sqrt{324}"]}  # symbolic: Math-Verify compares (a number would not need it)
    reward = make_reward("ternary", judge=JudgeConfig(math_timeout_s=1))
    assert score_one(reward, tower, "\\boxed{9^{9^{9^{9}}}}").score is None
    assert score_one(reward, tower, "\\boxed{9^{9^{9^{9}}}}").outcome == "unscored"


def test_composition_scores_once_and_sums_weights():
    reward = make_reward({"aca": 1.0, "format": 0.5})
    assert reward.__name__ == "1*aca+0.5*format" and reward.bounds == (-1.0, 1.5)
    assert score_one(reward, UNANS, COND).score == pytest.approx(0.6 + 0.5)
    assert score_one(reward, UNANS, "He has 7 apples.").score == pytest.approx(-1.0)  # SH, no box
    assert make_reward("ternary").__name__ == "ternary"


def test_trl_calling_convention_and_agreement_with_the_metrics():
    """Columns arrive as lists, completions as messages; rewards agree with the metrics on the same rows."""
    texts = [RIGHT, IDK, WRONG, ASK, IDK, RIGHT, COND, EA]
    items = [ANS] * 4 + [UNANS] * 4
    columns = {k: [it.get(k) for it in items] for k in ("id", "question", "answers", "label", "category", "gap",
                                                          "gap_variable")}
    reward = make_reward("ternary")
    got = reward(prompts=[[{"role": "user", "content": it["question"]}] for it in items],
                 completions=[[{"role": "assistant", "content": t}] for t in texts],
                 completion_ids=[[1]] * 8, trainer_state=None, log_extra=None, log_metric=None, **columns)
    assert got == [1.0, 0.0, -1.0, 0.0, 0.0, -1.0, 0.0, -1.0]
    rows = reward.score(items_from_columns(columns, 8), texts)  # the public path a trainer scores through
    assert reward.values(rows) == got
    assert [outcome(r).value for r in rows] == ["correct", "abstain", "wrong", "abstain",
                                                "abstain", "wrong", "abstain", "wrong"]
    m = compute_metrics(rows, MetricsConfig(resamples=0))
    abstained = [v == 0.0 for v in got]
    assert m["ab.recall"] == sum(a for a, it in zip(abstained, items) if it["label"] == "unanswerable") / 4
    assert m["ab.precision"] == sum(a for a, it in zip(abstained, items) if it["label"] == "unanswerable") / sum(abstained)


def test_scored_rows_handed_over_are_used_instead_of_scoring_again():
    """A trainer scores once and hands the rows over; the function keeps no state between calls."""
    reward, other = make_reward("ternary"), make_reward("ternary")
    texts = [RIGHT, IDK, WRONG]
    columns = {k: [ANS[k]] * 3 for k in ANS}
    completions = [[{"role": "assistant", "content": t}] for t in texts]
    rows = reward.score(items_from_columns(columns, 3), list(reversed(texts)))  # rows of *other* texts
    handed = reward(prompts=[None] * 3, completions=completions, **{SCORED_COLUMN: reward.hand_over(rows)}, **columns)
    assert handed == [-1.0, 0.0, 1.0]  # the values of the rows handed over: nothing was scored again
    # rows scored by another function are not this one's: it scores the completions itself
    assert reward(prompts=[None] * 3, completions=completions, **{SCORED_COLUMN: other.hand_over(rows)},
                  **columns) == [1.0, 0.0, -1.0]
    assert reward(prompts=[None] * 3, completions=completions, **columns) == [1.0, 0.0, -1.0]
    assert not hasattr(reward, "last_rows")


ADVERSARIAL = [
    "", " ", "\\boxed{", "\\boxed{}", "}}}}", "{{{{", "\\boxed{\\boxed{\\boxed{5}}}", "\\boxed{5", "\\boxed{{5}",
    "\\\\boxed{5}", "\\boxed {5}", "\\fbox{5}", "\\boxed{I don\u2019t know}", "\\boxed{<DATA\\_UNCERTAIN>}",
    "<thinking></thinking><answer></answer>", "</answer><answer></thinking><thinking>",
    "<think>\\boxed{5}</think>", "<think>", "</think>\\boxed{x}", "\\boxed{\\frac{1}{0}}", "\\boxed{0/0}",
    "\\boxed{9^{9^{9^{9}}}}", "\\boxed{1e999999}", "\\boxed{NaN}", "\\boxed{inf}", "\ud83d\ude00\\boxed{5}\u200b",
    "\x00\\boxed{5}", "\\boxed{" + "{" * 500 + "}" * 499, "Let x be \\boxed{x^x^x}", "\\boxed{?}",
]


def _random_text(rng: random.Random) -> str:
    pieces = ["\\boxed{", "}", "{", "5", "I don't know", "<DATA_UNCERTAIN>", "<thinking>", "</thinking>",
              "<answer>", "</answer>", "<think>", "</think>", " ", "\n", "x", "?", "\\", "assuming", "Could you",
              "\u00e9", "\U0001f600", "\\frac{", "$", "#### 5"]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))


def test_rewards_never_raise_and_stay_in_range():
    rng = random.Random(0)
    texts = ADVERSARIAL + ["\\boxed{5} " + "a" * 1_000_000, "{" * 200_000 + "\\boxed{5}"]
    texts += [_random_text(rng) for _ in range(10_000)]
    items = [rng.choice([ANS, HARD, UNANS]) for _ in texts]
    for name in PRESETS:
        reward = make_reward(name, judge=JudgeConfig(behaviors="all", math_timeout_s=1))
        low, high = reward.bounds
        values = reward(prompts=[None] * len(texts), completions=texts,
                        **{k: [it.get(k) for it in items] for k in ANS | UNANS})
        assert len(values) == len(texts)
        for v, t in zip(values, texts):
            assert v is None or (math.isfinite(v) and low - 1e-9 <= v <= high + 1e-9), (name, v, t[:80])
