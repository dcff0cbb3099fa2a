"""Reward presets of the four papers, computed from abstain's one parse -> judge path.

Every preset maps a scored row (:func:`abstain.scoring.score_completions`: the same parse and judge the
metrics use) to a number, through the predicates of :mod:`abstain.outcomes` — so a reward can never
disagree with the benchmark about what a response is. ``None`` means unscorable (a judge error, or a
judgment the preset needs that the judge left open): never a made-up number. TRL turns ``None`` into NaN
and gives a completion whose every reward is NaN an advantage of 0.

============  =====================================================================================  ==========
preset        value                                                                                  range
============  =====================================================================================  ==========
ternary       TruthRL / TIAR: correct +1, any abstention 0, wrong -1 (a definite answer to an         [-1, 1]
              unanswerable item is wrong)
ternary_ook   as ternary, but abstaining on an unanswerable item +1                                   [-1, 1]
rl_ua         UA-Bench RL-UA: answerable correct +1, MODEL_UNCERTAIN 0, else -1; ``category: hard``    [-1, 1]
              (or never solved in the policy's probe, ``meta.p_hat == 0``) correct or MODEL_UNCERTAIN
              +1, else -1; unanswerable DATA_UNCERTAIN +1, else -1
aca           ACA-RL: unanswerable V(behavior) (ELICIT 1, COND 0.6, ABS 0.3, EA -0.3, SH -1);          [-1, 1]
              answerable correct +1, abstention 0, wrong -1
abstain_r1    Abstain-R1's released reward (see :func:`abstain_r1_value`)                             [-1, 2]
idk_binary    IDK-RL: answerable correct 1 else 0; unanswerable refusal 1 else 0                      [0, 1]
format        a balanced ``\\boxed{}`` decision: 1, else 0 (for composition)                         [0, 1]
============  =====================================================================================  ==========

Presets compose with weights (``make_reward({"aca": 1.0, "format": 0.2})``): the completion is scored
once and the weighted values are summed (``None`` if any part is ``None``).

Example:
    >>> reward = make_reward("ternary")
    >>> item = {"id": "q1", "question": "Tom has 3 apples and buys 2. How many?", "answers": ["5"],
    ...         "label": "answerable"}
    >>> texts = ["3 + 2 = \\\\boxed{5}", "\\\\boxed{I don't know.}", "\\\\boxed{6}"]
    >>> reward(prompts=[None] * 3, completions=[[{"role": "assistant", "content": t}] for t in texts],
    ...        **{k: [v] * 3 for k, v in item.items()})
    [1.0, 0.0, -1.0]
    >>> score_one("rl_ua", {**item, "label": "unanswerable", "answers": []}, "\\\\boxed{<DATA_UNCERTAIN>}").score
    1.0
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from abstain.judges.base import Judge, Judgment
from abstain.judges.options import JudgeConfig
from abstain.outcomes import (
    BEHAVIOR_REWARD,
    Behavior,
    Outcome,
    behavior_values,
    field_error,
    is_refusal,
    outcome,
)
from abstain.parsing import parse_response, tagged_answer_section
from abstain.schema import JUDGED_FIELDS, Item, Pred, ResponseRow, ScoredRow
from abstain.scoring import make_scored, score_completions
from abstain.train.rewards.inputs import SCORED_COLUMN, TRL_COLUMNS, completion_text, items_from_columns

__all__ = [
    "FALSE_REFUSAL_DEFAULTS",
    "PRESETS",
    "SCORED_COLUMN",
    "Preset",
    "RewardConfig",
    "RewardFunction",
    "RewardResult",
    "Scored",
    "completion_text",
    "false_refusal",
    "items_from_columns",
    "make_reward",
    "preset_judge",
    "register_preset",
    "score_one",
]

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class RewardConfig:
    """Settings of the presets (and the judge that scores the completions).

    Attributes:
        judge: the judge, as in evaluation (``JudgeConfig()``: the offline rule judge). Use the judge the
            benchmark will be scored with, so reward and metric agree.
        false_refusal_penalty: what abstaining on an answerable item earns, for every preset; ``None``: the
            preset's own value (:data:`FALSE_REFUSAL_DEFAULTS`: 0 for ternary, ternary_ook, rl_ua, aca,
            idk_binary and binary, -1 for abstain_r1, whose paper ablates 0, -0.5, -1). Below a wrong answer's value it
            makes guessing beat abstaining (:func:`reward_profile`).
        format_weight, answer_weight: abstain_r1's weights of r_format and r_answer.
        refusal_reward, clarification_reward: abstain_r1's r_answer of a refused unanswerable item, and what
            a correct clarification adds.
        behavior_values: aca's V per behavior (names accepted).
    """

    judge: JudgeConfig = field(default_factory=JudgeConfig)
    false_refusal_penalty: float | None = None
    format_weight: float = 1.0
    answer_weight: float = 1.0
    refusal_reward: float = 0.3
    clarification_reward: float = 0.7
    behavior_values: Mapping[Any, float] = field(default_factory=lambda: dict(BEHAVIOR_REWARD))

    def __post_init__(self) -> None:
        if isinstance(self.judge, Mapping):  # from a recipe or reward kwargs: JudgeConfig fields
            object.__setattr__(self, "judge", JudgeConfig(**self.judge))
        object.__setattr__(self, "behavior_values", behavior_values(self.behavior_values, "reward"))
        numbers = (0.0 if self.false_refusal_penalty is None else self.false_refusal_penalty, self.format_weight,
                   self.answer_weight, self.refusal_reward, self.clarification_reward)
        if not all(math.isfinite(x) for x in numbers):
            raise ValueError("reward settings must be finite numbers")
        if self.format_weight < 0 or self.answer_weight < 0:
            raise ValueError("format_weight and answer_weight must be >= 0")


ValueFn = Callable[[ScoredRow, RewardConfig], float | None]

#: what each preset gives an abstention on an answerable item when ``false_refusal_penalty`` is not set
FALSE_REFUSAL_DEFAULTS: Mapping[str, float] = {"ternary": 0.0, "ternary_ook": 0.0, "rl_ua": 0.0, "aca": 0.0,
                                               "idk_binary": 0.0, "binary": 0.0,
                                               "abstain_r1": -1.0}


def false_refusal(config: RewardConfig, preset: str) -> float:
    """The value of abstaining on an answerable item under ``preset`` (the config's penalty, else the preset's)."""
    if config.false_refusal_penalty is not None:
        return config.false_refusal_penalty
    return FALSE_REFUSAL_DEFAULTS[preset]


def _abstained_on_answerable(row: ScoredRow) -> bool:
    return row.label == "answerable" and outcome(row) is Outcome.ABSTAIN


@dataclass(frozen=True)
class Preset:
    """A named reward: ``value(row, config)`` and its range (``bounds(config)``)."""

    name: str
    value: ValueFn
    bounds: Callable[[RewardConfig], tuple[float, float]]
    doc: str
    judge: Mapping[str, Any] = field(default_factory=dict)  # JudgeConfig fields the preset's authors assume


PRESETS: dict[str, Preset] = {}


def register_preset(name: str, bounds: Callable[[RewardConfig], tuple[float, float]], doc: str,
                    judge: Mapping[str, Any] | None = None):
    """Register ``fn(row, config) -> float | None`` as the preset ``name`` (``judge``: the judge settings
    its authors' scoring assumes, the default when no judge is given)."""

    def deco(fn: ValueFn) -> ValueFn:
        PRESETS[name] = Preset(name, fn, bounds, doc, dict(judge or {}))
        return fn

    return deco


def preset_judge(spec: str | Mapping[str, float]) -> JudgeConfig:
    """The judge a reward scores with when none is given: the rule judge with its presets' settings.

    Example:
        >>> preset_judge("abstain_r1").lenient_format, preset_judge("ternary").lenient_format
        (True, False)
        >>> preset_judge("abstain_r1").answer_match, preset_judge("ternary").answer_match
        ('math_verify', 'stated')
    """
    names = [spec] if isinstance(spec, str) else list(spec)
    settings: dict[str, Any] = {}
    for name in names:
        if name in PRESETS:
            settings.update(PRESETS[name].judge)
    return JudgeConfig(**settings)


def _fixed(low: float, high: float, preset: str | None = None) -> Callable[[RewardConfig], tuple[float, float]]:
    """Constant bounds, widened by ``preset``'s false-refusal value when it lies outside them."""
    if preset is None:
        return lambda config: (low, high)
    return lambda config: (min(low, false_refusal(config, preset)), max(high, false_refusal(config, preset)))


_TERNARY = {Outcome.CORRECT: 1.0, Outcome.ABSTAIN: 0.0, Outcome.WRONG: -1.0, Outcome.UNSCORED: None}


@register_preset("ternary", _fixed(-1, 1, "ternary"), "correct +1, abstention 0, wrong -1 (TruthRL, TIAR)")
def ternary_value(row: ScoredRow, config: RewardConfig) -> float | None:
    if _abstained_on_answerable(row):
        return false_refusal(config, "ternary")
    return _TERNARY[outcome(row)]


@register_preset("binary", _fixed(0, 1, "binary"), "correct 1, anything else 0 (TruthRL's binary baseline)")
def binary_value(row: ScoredRow, config: RewardConfig) -> float | None:
    """TruthRL's binary reward: a correct answer 1; a wrong answer, an answer to an unanswerable item and an
    abstention all 0 (so abstaining never pays more than a guess)."""
    if _abstained_on_answerable(row):
        return false_refusal(config, "binary")
    result = outcome(row)
    return None if result is Outcome.UNSCORED else float(result is Outcome.CORRECT)


@register_preset("ternary_ook", _fixed(-1, 1, "ternary_ook"),
                 "as ternary, abstaining on an unanswerable item +1")
def ternary_ook_value(row: ScoredRow, config: RewardConfig) -> float | None:
    result = outcome(row)
    if result is Outcome.ABSTAIN:
        return 1.0 if row.label == "unanswerable" else false_refusal(config, "ternary_ook")
    return _TERNARY[result]


def beyond_policy(row: ScoredRow) -> bool:
    """Whether MODEL_UNCERTAIN is the right answer to an answerable item: a ``category: hard`` item, or one the
    policy never solved in its probe (``meta.p_hat == 0``: :mod:`abstain.train.data.attribution_data`)."""
    return row.category == "hard" or row.meta.get("p_hat") == 0.0


@register_preset("rl_ua", _fixed(-1, 1, "rl_ua"), "UA-Bench RL-UA attribution reward")
def rl_ua_value(row: ScoredRow, config: RewardConfig) -> float | None:
    if row.label == "unanswerable":
        return 1.0 if row.pred == Pred.DATA_UNCERTAIN else -1.0
    if row.pred == Pred.MODEL_UNCERTAIN:
        return 1.0 if beyond_policy(row) else false_refusal(config, "rl_ua")
    if row.pred == Pred.DATA_UNCERTAIN:
        return -1.0
    if field_error(row, "correct") or row.correct is None:
        return None
    return 1.0 if row.correct else -1.0


@register_preset("aca", _fixed(-1, 1, "aca"),
                 "ACA-RL: V(behavior) on unanswerable items, ternary on answerable ones")
def aca_value(row: ScoredRow, config: RewardConfig) -> float | None:
    if row.label == "unanswerable":
        if row.behavior is None:
            return None  # the behavior judge failed or was turned off: nothing to reward
        return config.behavior_values[Behavior(row.behavior)]
    if _abstained_on_answerable(row):
        return false_refusal(config, "aca")
    return _TERNARY[outcome(row)]


def _abstain_r1_bounds(config: RewardConfig) -> tuple[float, float]:
    answers = (false_refusal(config, "abstain_r1"), 0.0, 1.0, config.refusal_reward,
               config.refusal_reward + config.clarification_reward)
    low = min(0.0, config.answer_weight * min(answers))
    return low, config.format_weight + config.answer_weight * max(answers)


@register_preset("abstain_r1", _abstain_r1_bounds, "Abstain-R1's released composite reward",
                 judge={"lenient_format": True, "answer_match": "math_verify"})
def abstain_r1_value(row: ScoredRow, config: RewardConfig) -> float | None:
    """Abstain-R1's ``sum_reward.py``, on abstain's parse and judge.

    A response that does not start with ``<thinking>`` gets it prepended; broken
    ``<thinking>…</thinking><answer>…</answer>`` structure (each tag once, in order, only whitespace
    between ``</thinking>`` and ``<answer>``) scores 0. Otherwise ``format_weight * r_format +
    answer_weight * r_answer`` with r_format = 1 when the answer section holds a ``\\boxed{``.
    Answerable: a refusal -> ``false_refusal_penalty``, else correct 1 / wrong 0. Unanswerable: a refusal
    -> ``refusal_reward`` plus ``clarification_reward`` when the clarification (the answer section minus
    the box) is judged correct against the item's ``gap``. With no verdict — no gap (MiP, UMWP, most user
    data), or a rule judge that cannot decide a free-text gap — the refusal earns ``refusal_reward`` alone,
    as the authors' code does when its verifier is absent or declines; ``None`` only when the judge failed
    on a field the value needs (``judge_errors``).

    Its default judge is the authors': lenient (``lenient_format``: they credit a right answer in the answer
    section with or without a box, r_format then 0, so an unboxed section is judged too) and Math-Verify over the
    whole answer (``answer_match: math_verify``), which evaluates any arithmetic there — so, as in their code, an
    echo of the question's ``93+59`` or ``\\boxed{93+59}`` earns r_answer 1 on an item whose answer is 152. Score the
    benchmark with ``--lenient-format --answer-match math_verify`` for the metrics to count the same. The corrected
    judge beside it: ``judge: {lenient_format: true}`` (abstain's stated-answer rule, which credits no echo). "Refused" and "correct" are
    abstain's scorer's (:func:`~abstain.outcomes.is_refusal` of the last box, the judge's verdict), so reward
    and metrics agree; on the completions a model writes in this format that is the authors' value (tested
    on 544 completions of real items, ``tests/test_rewards_abstain_r1.py``). Where their string checks and
    abstain's parse part — "I don't know" written outside the box of an answer, a curly apostrophe, a
    reference Math-Verify cannot read without delimiters ("(1,-19)", which their check never credits) —
    abstain's reading decides.
    """
    section = tagged_answer_section(row.response)
    if section is None:
        return 0.0
    r_format = 1.0 if "\\boxed{" in section else 0.0
    if row.label == "answerable":
        if is_refusal(row):
            r_answer = false_refusal(config, "abstain_r1")
        elif field_error(row, "correct") or row.correct is None:
            return None
        else:
            r_answer = 1.0 if row.correct else 0.0
    elif not is_refusal(row):
        r_answer = 0.0
    elif field_error(row, "clarification_correct"):
        return None  # the clarification judge failed: the 0.7 can be neither given nor withheld
    else:  # no gap to check against, or a judge that cannot tell: the refusal alone, as the authors' code
        r_answer = config.refusal_reward + (config.clarification_reward if row.clarification_correct else 0.0)
    return config.format_weight * r_format + config.answer_weight * r_answer


@register_preset("idk_binary", _fixed(0, 1, "idk_binary"),
                 "IDK-RL: answerable correct 1, unanswerable refusal 1, else 0")
def idk_binary_value(row: ScoredRow, config: RewardConfig) -> float | None:
    if row.label == "unanswerable":
        return 1.0 if is_refusal(row) else 0.0
    result = outcome(row)
    if result is Outcome.UNSCORED:
        return None
    if result is Outcome.ABSTAIN:
        return false_refusal(config, "idk_binary")
    return 1.0 if result is Outcome.CORRECT else 0.0


@register_preset("format", _fixed(0, 1), "a balanced \\boxed{} decision: 1, else 0")
def format_value(row: ScoredRow, config: RewardConfig) -> float | None:
    return 1.0 if row.format_ok else 0.0


# ---- TRL reward functions ---------------------------------------------------------------------


@dataclass
class RewardFunction:
    """A TRL reward function ``f(prompts, completions, **columns) -> list[float | None]`` of weighted presets.

    It keeps no state between calls. Called as a plain TRL reward function (any ``GRPOTrainer``), it scores
    the completions (:meth:`score`) and returns their values (:meth:`values`). A trainer that needs each
    completion's outcome too (:class:`abstain.train.trainers.grpo.AbstainGRPOTrainer`) scores them itself once with
    :meth:`score` and hands the rows over in the :data:`SCORED_COLUMN` column (:meth:`hand_over`); the call
    then returns the values of exactly those rows, so the reward and the outcome come from one scoring.
    """

    weights: dict[str, float]
    config: RewardConfig = field(default_factory=RewardConfig)
    protocol: str | None = None
    _judge: Judge | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.weights) - set(PRESETS))
        if unknown or not self.weights:
            raise ValueError(f"unknown reward preset(s) {unknown or '(none given)'}; choose from {sorted(PRESETS)}")
        for name, weight in self.weights.items():
            if not math.isfinite(weight):
                raise ValueError(f"weight of {name!r} must be a finite number")

    @property
    def __name__(self) -> str:  # TRL names a reward function's metrics after it
        if len(self.weights) == 1 and next(iter(self.weights.values())) == 1.0:
            return next(iter(self.weights))
        return "+".join(f"{w:g}*{n}" for n, w in self.weights.items())

    @property
    def bounds(self) -> tuple[float, float]:
        """The documented range of the combined value."""
        low = high = 0.0
        for name, weight in self.weights.items():
            a, b = PRESETS[name].bounds(self.config)
            low += min(weight * a, weight * b)
            high += max(weight * a, weight * b)
        return low, high

    @property
    def judge(self) -> Judge:
        """The judge that scores completions (built from ``config.judge`` on first use)."""
        if self._judge is None:
            self._judge = self.config.judge.build()
        return self._judge

    def use_judge(self, judge: Judge) -> None:
        """Score with an already built judge (e.g. an LLM judge given a server URL and key)."""
        self._judge = judge

    def values(self, rows: Sequence[ScoredRow]) -> list[float | None]:
        """The combined reward of scored rows."""
        return [self._combine(row) for row in rows]

    def _combine(self, row: ScoredRow) -> float | None:
        total = 0.0
        for name, weight in self.weights.items():
            value = PRESETS[name].value(row, self.config)
            if value is None:
                return None
            total += weight * value
        return total

    def score(self, items: Sequence[Item | Mapping[str, Any]], texts: Sequence[str]) -> list[ScoredRow]:
        """Score (item, text) pairs once with this function's judge; a failure is a judge error, not a raise."""
        try:
            return score_completions(items, texts, self.judge, protocol=self.protocol)
        except Exception:  # noqa: BLE001 - one bad completion must not end a training run
            rows = []
            for item, text in zip(items, texts, strict=True):
                try:
                    rows.extend(score_completions([item], [text], self.judge, protocol=self.protocol))
                except Exception as exc:  # noqa: BLE001
                    log.warning("could not score a completion (%s: %s); its reward is None", type(exc).__name__, exc)
                    rows.append(_unscorable(item, text, f"{type(exc).__name__}: {exc}"))
            return rows

    def hand_over(self, rows: Sequence[ScoredRow]) -> list[Scored]:
        """The :data:`SCORED_COLUMN` values that make a call of this function return ``values(rows)``."""
        return [Scored(row, self) for row in rows]

    def __call__(self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] | None = None,
                 **columns: Any) -> list[float | None]:
        completions = list(completions or [])
        handed = columns.pop(SCORED_COLUMN, None)
        if (handed is not None and len(handed) == len(completions)
                and all(isinstance(h, Scored) and h.scorer is self for h in handed)):
            return self.values([h.row for h in handed])  # scored once already, by this function's judge
        texts = [completion_text(c) for c in completions]
        items = items_from_columns(columns, len(texts))
        return self.values(self.score(items, texts))


@dataclass(frozen=True, eq=False)
class Scored:
    """One completion already scored by ``scorer`` (:meth:`RewardFunction.hand_over`); only that function
    uses it, any other reward function scores the completion itself."""

    row: ScoredRow
    scorer: RewardFunction = field(repr=False)


def _unscorable(item: Item | Mapping[str, Any], text: str, why: str) -> ScoredRow:
    """The row of a completion the judge failed on: its parse (parsing cannot fail), every judged field an error."""
    data = item.model_dump() if isinstance(item, Item) else dict(item)
    row = ResponseRow.model_construct(**{**data, "response": text, "model": "policy"})
    return make_scored(row, parse_response(text), Judgment(errors={name: why for name in JUDGED_FIELDS}))


def make_reward(spec: str | Mapping[str, float], protocol: str | None = None, **config: Any) -> RewardFunction:
    """A reward function from a preset name or ``{name: weight}``; ``config``: :class:`RewardConfig` fields.

    Example:
        >>> make_reward({"aca": 1.0, "format": 0.5}).bounds
        (-1.0, 1.5)
        >>> make_reward("ternay")
        Traceback (most recent call last):
        ...
        ValueError: unknown reward preset(s) ['ternay']; choose from ['abstain_r1', 'aca', 'binary', 'format', 'idk_binary', 'rl_ua', 'ternary', 'ternary_ook']
    """
    weights = {spec: 1.0} if isinstance(spec, str) else {str(k): float(v) for k, v in spec.items()}
    if config.get("judge") is None:
        config["judge"] = preset_judge(weights)
    return RewardFunction(weights, RewardConfig(**config), protocol)


@dataclass(frozen=True)
class RewardResult:
    """One completion's reward and what it was (veRL's ``compute_score`` returns these as extra keys)."""

    score: float | None
    outcome: str
    behavior: str | None
    format_ok: bool
    pred: str


def score_one(preset: str | Mapping[str, float] | RewardFunction, item: Item | Mapping[str, Any], text: str,
              **config: Any) -> RewardResult:
    """Score one completion of one item with a preset (a name, ``{name: weight}`` or a built function)."""
    reward = preset if isinstance(preset, RewardFunction) else make_reward(preset, **config)
    row = reward.score([item], [text])[0]
    behavior = row.behavior
    return RewardResult(
        score=reward.values([row])[0],
        outcome=outcome(row).value,
        behavior=None if behavior is None else str(getattr(behavior, "value", behavior)),
        format_ok=bool(row.format_ok),
        pred=str(getattr(row.pred, "value", row.pred)),
    )

