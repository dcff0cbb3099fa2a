"""When does a reward make abstaining everywhere the best policy? p* and the always-abstain margin.

A reward is read off the five things a completion can be (scored by the real preset on canonical
completions, through the same parse -> judge path as training — never restated by hand):

    R(correct)      an answerable item answered correctly
    R(wrong)        an answerable item answered wrongly
    R(refuse | A)   an answerable item refused (the false-refusal value)
    R(refuse | U)   an unanswerable item refused
    R(answer | U)   an unanswerable item answered

**Per item.** A policy right with probability p on an answerable item gains by answering rather than
refusing iff p > p* = (R(refuse|A) - R(wrong)) / (R(correct) - R(wrong)). p* = 0.5 for ``ternary``; p* <= 0
(answering always wins) once the false refusal earns no more than a wrong answer.

**Over the mix.** A policy that cannot yet tell the labels apart chooses between *always abstaining* and
*always answering*. With unanswerable share u and accuracy p on answerable items the margin

    margin(u, p) = (1-u)[p R(correct) + (1-p) R(wrong)] + u R(answer|U)  -  [u R(refuse|U) + (1-u) R(refuse|A)]

must be > 0, or GRPO drifts to always-abstain (the collapse of the cpu-demo runs: ``ternary`` at p ~ 0.05).
``break_even_p(u)`` is the p where the margin is 0. ``abstain train grpo`` prints both for its mix.

Example:
    >>> prof = reward_profile("idk_binary")
    >>> prof.p_star, round(prof.margin(u=0.35, p=0.05), 4)
    (0.0, -0.3175)
    >>> prof = reward_profile("idk_binary", false_refusal_penalty=-0.6)
    >>> round(prof.margin(u=0.35, p=0.05), 4) > 0, round(prof.break_even_p(0.35), 3)
    (True, 0.0)
    >>> reward_profile("ternary").p_star
    0.5
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from abstain.train.rewards import RewardFunction, make_reward

__all__ = ["RewardProfile", "reward_profile"]

_ANSWERABLE = {"id": "profile-a", "question": "Tom has 3 apples and buys 2 more. How many apples does Tom have?",
               "answers": ["5"], "label": "answerable"}
_UNANSWERABLE = {"id": "profile-u", "question": "Tom has some apples and buys 2 more. How many apples does Tom have?",
                 "answers": [], "label": "unanswerable", "gap": "The problem never states how many apples Tom had."}
#: the refusal texts an always-abstaining policy could write; it is credited with the best of them
_REFUSALS = ("I don't know.", "<DATA_UNCERTAIN>", "<MODEL_UNCERTAIN>")


@dataclass(frozen=True)
class RewardProfile:
    """The five values of a reward (see the module docstring) and what follows from them."""

    name: str
    correct: float
    wrong: float
    refuse_answerable: float
    refuse_unanswerable: float
    answer_unanswerable: float
    refusal: str  # the refusal text an always-abstaining policy does best with (the values above)
    best_refuse_answerable: float  # the best any refusal text earns on an answerable item (p* uses it)

    @property
    def p_star(self) -> float:
        """The accuracy above which answering an answerable item beats its best refusal (<= 0: always)."""
        spread = self.correct - self.wrong
        if spread <= 0:
            raise ValueError(f"{self.name}: a correct answer must earn more than a wrong one")
        return round((self.best_refuse_answerable - self.wrong) / spread, 6)

    def always_abstain(self, u: float) -> float:
        """Mean reward of refusing everything on a mix with unanswerable share ``u``."""
        return u * self.refuse_unanswerable + (1 - u) * self.refuse_answerable

    def always_answer(self, u: float, p: float) -> float:
        """Mean reward of answering everything, right with probability ``p`` on answerable items."""
        return (1 - u) * (p * self.correct + (1 - p) * self.wrong) + u * self.answer_unanswerable

    def margin(self, u: float, p: float) -> float:
        """always_answer - always_abstain: > 0 means GRPO is not pulled to refusing everything."""
        return self.always_answer(u, p) - self.always_abstain(u)

    def break_even_p(self, u: float) -> float:
        """The accuracy at which the margin is 0 (clipped to [0, 1]): below it, always-abstain wins."""
        slope = (1 - u) * (self.correct - self.wrong)
        p = -self.margin(u, 0.0) / slope
        return round(min(max(p, 0.0), 1.0), 6)

    def report(self, u: float, p: float | None = None) -> str:
        """One paragraph for a training log: the values, p*, the break-even accuracy and the margin."""
        text = (f"reward {self.name}: correct {self.correct:+g}, wrong {self.wrong:+g}, refusing an answerable item "
                f"{self.refuse_answerable:+g}, refusing an unanswerable one {self.refuse_unanswerable:+g}, answering "
                f"it {self.answer_unanswerable:+g}; per item answering pays iff p > p* = {self.p_star:g}; on this mix "
                f"(unanswerable share {u:.2f}) always-abstain scores {self.always_abstain(u):+.3f} and ")
        if self.margin(u, 0.0) > 0:
            text += f"always-answer beats it at every accuracy (it scores {self.always_answer(u, 0.0):+.3f} at p = 0)"
        else:
            text += (f"beats always-answer unless the policy is right on more than {self.break_even_p(u):.3f} of "
                     "answerable items")
        if p is not None:
            text += f"; at p = {p:.3f} the margin is {self.margin(u, p):+.3f}"
        return text


def _value(reward: RewardFunction, item: Mapping[str, Any], text: str) -> float:
    value = reward.values(reward.score([item], [text]))[0]
    if value is None:
        raise ValueError(f"{reward.__name__}: the judge could not score {text!r}")
    return value


def reward_profile(spec: str | Mapping[str, float] | RewardFunction, **config: Any) -> RewardProfile:
    """Read the five values of a reward (a preset name, ``{name: weight}`` or a built function) by scoring
    canonical completions; ``config``: :class:`~abstain.train.rewards.RewardConfig` fields. An always-abstaining
    policy is credited with whichever refusal text (``I don't know.``, ``<DATA_UNCERTAIN>``,
    ``<MODEL_UNCERTAIN>``) serves it best; tagged presets (``abstain_r1``) get their tags."""
    reward = spec if isinstance(spec, RewardFunction) else make_reward(spec, **config)
    wrap = (lambda t: f"<thinking>Check the facts.</thinking><answer>{t}</answer>") if "abstain_r1" in reward.weights \
        else (lambda t: t)
    box = lambda t: wrap(f"\\boxed{{{t}}}")  # noqa: E731
    correct, wrong = _value(reward, _ANSWERABLE, box("5")), _value(reward, _ANSWERABLE, box("6"))
    answer_u = _value(reward, _UNANSWERABLE, box("6"))
    values = {t: (_value(reward, _ANSWERABLE, box(t)), _value(reward, _UNANSWERABLE, box(t))) for t in _REFUSALS}
    best_a = max(a for a, _ in values.values())
    profiles = [RewardProfile(reward.__name__, correct, wrong, a, u, answer_u, t, best_a) for t, (a, u) in values.items()]
    return max(profiles, key=lambda prof: prof.always_abstain(0.5))
