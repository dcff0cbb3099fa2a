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
``break_even_p(u)`` is the p where the margin is 0. ``abstain train grpo`` prints both for its mix
(:func:`mix_profile`).

**Beyond the policy.** A reward that reads the policy's probe (``rl_ua``: an answerable problem never solved,
``meta.p_hat == 0``, is rightly MODEL_UNCERTAIN) pays a refusal there: refusing such an item is no false
refusal, so :func:`mix_profile` leaves those items out of the margin and reports them apart.

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

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abstain.train.rewards.presets import RewardFunction, make_reward

__all__ = ["MixProfile", "RewardProfile", "mix_profile", "profile_message", "report_mix", "reward_profile"]

log = logging.getLogger(__name__)

_ANSWERABLE = {"id": "profile-a", "question": "Tom has 3 apples and buys 2 more. How many apples does Tom have?",
               "answers": ["5"], "label": "answerable"}
_UNANSWERABLE = {"id": "profile-u", "question": "Tom has some apples and buys 2 more. How many apples does Tom have?",
                 "answers": [], "label": "unanswerable", "gap": "The problem never states how many apples Tom had."}
#: the same problem, never solved by the policy in its probe (what ``rl_ua`` reads as "beyond me")
_NEVER_SOLVED = {**_ANSWERABLE, "meta": {"p_hat": 0.0}}
#: the refusal texts an always-abstaining policy could write; it is credited with the best of them
_REFUSALS = ("I don't know.", "<DATA_UNCERTAIN>", "<MODEL_UNCERTAIN>")
#: the accuracy the always-abstain margin is read at when nothing was probed
UNPROBED_P = 0.05


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
    answerable_refusal: str  # the refusal text that earns it (a tie goes to the tag)

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
        if slope == 0:  # no answerable item (u = 1), or a reward blind to correctness: p does not matter
            return 0.0 if self.margin(u, 0.0) > 0 else 1.0
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


def reward_profile(spec: str | Mapping[str, float] | RewardFunction, *, beyond: bool = False,
                   **config: Any) -> RewardProfile:
    """Read the five values of a reward (a preset name, ``{name: weight}`` or a built function) by scoring
    canonical completions; ``config``: :class:`~abstain.train.rewards.presets.RewardConfig` fields. An always-abstaining
    policy is credited with whichever refusal text (``I don't know.``, ``<DATA_UNCERTAIN>``,
    ``<MODEL_UNCERTAIN>``) serves it best; tagged presets (``abstain_r1``) get their tags. ``beyond``: the
    answerable problem is one the policy never solved in its probe (``meta.p_hat == 0``).

    Example:
        >>> reward_profile("rl_ua").refuse_answerable, reward_profile("rl_ua", beyond=True).best_refuse_answerable
        (-1.0, 1.0)
    """
    reward = spec if isinstance(spec, RewardFunction) else make_reward(spec, **config)
    answerable = _NEVER_SOLVED if beyond else _ANSWERABLE
    wrap = (lambda t: f"<thinking>Check the facts.</thinking><answer>{t}</answer>") if "abstain_r1" in reward.weights \
        else (lambda t: t)
    box = lambda t: wrap(f"\\boxed{{{t}}}")  # noqa: E731
    correct, wrong = _value(reward, answerable, box("5")), _value(reward, answerable, box("6"))
    answer_u = _value(reward, _UNANSWERABLE, box("6"))
    values = {t: (_value(reward, answerable, box(t)), _value(reward, _UNANSWERABLE, box(t))) for t in _REFUSALS}
    best = max(reversed(_REFUSALS), key=lambda t: values[t][0])
    profiles = [RewardProfile(reward.__name__, correct, wrong, a, u, answer_u, t, values[best][0], best)
                for t, (a, u) in values.items()]
    return max(profiles, key=lambda prof: prof.always_abstain(0.5))


@dataclass(frozen=True)
class MixProfile:
    """A reward's profile on a training mix (what ``abstain train grpo`` writes to ``reward_profile.json``).

    ``margin`` is None when no answerable item is left for it: every one is beyond the policy and the reward
    pays a refusal there, so refusing everywhere is what the reward asks, and what it teaches is which refusal
    goes with which label.
    """

    profile: RewardProfile  # of the answerable items the policy is not known to be beyond
    beyond_profile: RewardProfile  # of a problem the policy never solved
    unanswerable_share: float  # among the items the margin is about (beyond-the-policy ones left out)
    probed_p: float | None  # mean p-hat of those answerable items, where probed
    answerable: int
    beyond: int  # answerable items beyond the policy that the reward pays a refusal on
    margin: float | None  # at ``at_p``; None when every answerable item is beyond the policy

    @property
    def at_p(self) -> float:
        """The accuracy the margin is read at: the probed one, else :data:`UNPROBED_P`."""
        return self.probed_p if self.probed_p is not None else UNPROBED_P

    @property
    def beyond_refusal(self) -> str | None:
        """The refusal text the reward pays best on a problem beyond the policy (None: no such item)."""
        return self.beyond_profile.answerable_refusal if self.beyond else None

    @property
    def collapses(self) -> bool:
        """Whether always-abstain beats always-answer on the items the margin is about."""
        return self.margin is not None and self.margin <= 0

    def report(self) -> str:
        """One paragraph for the training log."""
        text = ""
        if self.beyond:
            text = (f"{self.beyond} of {self.answerable} answerable items are beyond the policy (p-hat 0 in its "
                    f"probe), where {self.profile.name} pays {self.beyond_refusal} "
                    f"{self.beyond_profile.best_refuse_answerable:+g}: no false refusal")
            if self.margin is None:
                return text + ("; every answerable item is, so refusing everywhere is what this reward asks for, "
                               "and what it teaches is which refusal goes with which label")
            text += ", so they are left out of the margin; "
        return text + self.profile.report(self.unanswerable_share, self.probed_p)

    def write(self, path: Path) -> None:
        """Write :meth:`to_json` to ``path`` (``reward_profile.json``)."""
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    def to_json(self) -> dict[str, Any]:
        """The record written next to the run (``reward_profile.json``)."""
        prof, u = self.profile, self.unanswerable_share
        return {"reward": prof.name, "unanswerable_share": u, "probed_p": self.probed_p, "p_star": prof.p_star,
                "break_even_p": None if self.margin is None else prof.break_even_p(u),
                "margin_at_probed_p": self.margin if self.probed_p is not None else None,
                "answerable": self.answerable, "beyond_policy": self.beyond, "beyond_refusal": self.beyond_refusal,
                "values": {k: getattr(prof, k) for k in ("correct", "wrong", "refuse_answerable", "refuse_unanswerable",
                                                         "answer_unanswerable")}, "refusal": prof.refusal}


def mix_profile(reward: RewardFunction, items: Sequence[Any]) -> MixProfile:
    """The reward's profile on a training mix (items with ``label`` and ``meta``; ``meta.p_hat`` from a probe).

    Answerable items the policy never solved (p-hat 0) are left out of the margin when the reward pays a
    refusal there more than elsewhere (``rl_ua``'s "beyond me"); a reward blind to the probe keeps them in.

    Example:
        >>> from types import SimpleNamespace as Item
        >>> mix = [Item(label="answerable", meta={"p_hat": 0.0}), Item(label="unanswerable", meta={})]
        >>> mix_profile(make_reward("rl_ua"), mix).report()[:73]
        '1 of 1 answerable items are beyond the policy (p-hat 0 in its probe), whe'
        >>> mix_profile(make_reward("ternary"), mix).collapses
        True
    """
    plain, beyond_prof = reward_profile(reward), reward_profile(reward, beyond=True)
    reads_probe = beyond_prof.best_refuse_answerable > plain.best_refuse_answerable
    answerable = [item for item in items if item.label == "answerable"]
    beyond = [item for item in answerable if reads_probe and item.meta.get("p_hat") == 0.0]
    left_out = {id(item) for item in beyond}
    kept = [item for item in items if id(item) not in left_out]
    u = sum(item.label == "unanswerable" for item in kept) / max(len(kept), 1)
    probed = [item.meta["p_hat"] for item in kept if item.label == "answerable" and "p_hat" in item.meta]
    p = sum(probed) / len(probed) if probed else None
    margin = plain.margin(u, p if p is not None else UNPROBED_P) if len(answerable) > len(beyond) else None
    return MixProfile(plain, beyond_prof, u, p, len(answerable), len(beyond), margin)


def report_mix(reward: RewardFunction, items: Sequence[Any], record: Path | None = None) -> MixProfile | None:
    """Say whether always-abstain beats always-answer on this mix, as ``abstain train grpo`` and ``abstain export
    verl`` do: the profile written to ``record`` (``reward_profile.json``) when given, a warning when the mix
    collapses at the probed accuracy (or at p = 0.05 when nothing was probed), else one info line. Answerable items
    beyond the policy, where the reward pays a refusal (``rl_ua``), are reported apart (:func:`mix_profile`). A
    profile that cannot be computed (an LLM judge out of reach) is a warning, and None.

    Example:
        >>> from types import SimpleNamespace as Item
        >>> mix = [Item(label="answerable", meta={}), Item(label="unanswerable", meta={})]
        >>> report_mix(make_reward("ternary"), mix).collapses
        True
    """
    try:
        profile = mix_profile(reward, items)
    except Exception as exc:  # noqa: BLE001 - e.g. an LLM judge that cannot be reached: training goes on
        log.warning("no reward profile (%s: %s)", type(exc).__name__, exc)
        return None
    if record is not None:
        profile.write(record)
    level, text = profile_message(profile)
    log.log(level, "%s", text)
    return profile


def profile_message(profile: MixProfile) -> tuple[int, str]:
    """The logging level and the text that say what :func:`report_mix` says: a warning when always-abstain wins.

    Example:
        >>> from types import SimpleNamespace as Item
        >>> mix = [Item(label="answerable", meta={}), Item(label="unanswerable", meta={})]
        >>> level, text = profile_message(mix_profile(make_reward("ternary"), mix))
        >>> level == logging.WARNING, text.startswith("always-abstain is optimal")
        (True, True)
    """
    if profile.collapses:
        return logging.WARNING, (
            f"always-abstain is optimal: {profile.report()} (at p = {profile.at_p:.2f}"
            f"{'' if profile.probed_p is not None else ', no probe given'}); lower reward_config.false_refusal_penalty, "
            "lower the unanswerable share or train on problems the policy solves (data.probe)")
    return logging.INFO, profile.report()
