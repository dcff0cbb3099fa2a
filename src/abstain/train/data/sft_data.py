"""Verifiable cold-start SFT data: items -> prompt/completion rows, each target scored before it is written.

A row is TRL's conversational prompt/completion format — ``prompt`` is exactly what
``abstain.protocols.get_protocol(p).messages(item)`` gives (the model is trained in the format it is
evaluated in), ``completion`` one assistant message holding the target of
:mod:`abstain.train.data.targets.build` — plus flat item columns (``id``, ``label``, ``category``,
``perturbation``, ``target_kind``, ...; no nested ones, so ``datasets`` reads any file).

Every target goes through abstain's scorer (:mod:`abstain.train.data.check`) and must come out as intended
(answerable: correct; unanswerable: the protocol's decision and behavior). A target that does not is
an error, or with ``on_fail="drop"`` left out and counted in :attr:`SFTBuild.dropped` — never written
silently. Under ``aca`` the twins' targets are a mix of ELICIT, COND and ABS in exact proportions
(``aca_mix``), assigned by a seeded shuffle.

Example:
    >>> from abstain.synth import SynthConfig, generate_missing_premise
    >>> items = list(generate_missing_premise(SynthConfig(n=12, seed=1)))
    >>> built = build_sft(items, SFTConfig(protocol="aca", aca_mix=parse_aca_mix("ELICIT=0.5,COND=0.5")))
    >>> built.counts
    {'answer': 6, 'cond': 3, 'elicit': 3}
    >>> row = built.rows[0]
    >>> row.prompt[-1]["role"], row.completion[0]["content"].endswith("\\\\boxed{" + row.answers[0] + "}")
    ('user', True)
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from abstain.protocols import get_protocol
from abstain.schema import Item, write_jsonl
from abstain.train.data.rows import ItemColumns, PromptCompletionRow
from abstain.train.data.check import verify_targets
from abstain.train.data.targets.build import ACA_CHOICES, PROTOCOLS, Target, TargetConfig, build_target

__all__ = [
    "DEFAULT_ACA_MIX",
    "SFTBuild",
    "SFTConfig",
    "SFTRow",
    "assign_aca",
    "build_sft",
    "length_summary",
    "parse_aca_mix",
    "sft_row",
    "token_lengths",
    "write_sft",
]

#: ELICIT / COND / ABS shares of the aca twins' targets
DEFAULT_ACA_MIX: tuple[tuple[str, float], ...] = (("ELICIT", 0.4), ("COND", 0.3), ("ABS", 0.3))


def parse_aca_mix(spec: str) -> tuple[tuple[str, float], ...]:
    """``"ELICIT=0.4,COND=0.3,ABS=0.3"`` -> pairs; shares are normalized to sum to 1.

    Example:
        >>> parse_aca_mix("elicit=1,abs=1")
        (('ELICIT', 0.5), ('ABS', 0.5))
    """
    pairs: list[tuple[str, float]] = []
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        name = name.strip().upper()
        if not sep or name not in ACA_CHOICES:
            raise ValueError(f"--aca-mix: {part!r} is not BEHAVIOR=SHARE with BEHAVIOR one of {', '.join(ACA_CHOICES)}")
        try:
            share = float(value)
        except ValueError:
            raise ValueError(f"--aca-mix: the share of {name} ({value!r}) is not a number") from None
        if share < 0:
            raise ValueError(f"--aca-mix: the share of {name} is negative")
        if name in dict(pairs):
            raise ValueError(f"--aca-mix lists {name} twice")
        pairs.append((name, share))
    total = sum(s for _, s in pairs)
    if not pairs or total <= 0:
        raise ValueError("--aca-mix needs at least one positive share, e.g. ELICIT=0.4,COND=0.3,ABS=0.3")
    return tuple((name, share / total) for name, share in pairs)


@dataclass(frozen=True)
class SFTConfig:
    """What :func:`build_sft` builds."""

    protocol: str = field(metadata={"help": "attribution | idk | clarify | aca | abstention_only"})
    targets: TargetConfig = field(default_factory=TargetConfig, metadata={"help": "how targets are written"})
    aca_mix: tuple[tuple[str, float], ...] = field(default=DEFAULT_ACA_MIX, metadata={"help": "aca twins' mix"})
    seed: int = field(default=0, metadata={"help": "seed of the aca assignment"})
    on_fail: Literal["error", "drop"] = field(default="error", metadata={"help": "a failing target: error | drop"})

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"--protocol {self.protocol!r} has no SFT targets; choose one of {', '.join(PROTOCOLS)}")
        if self.on_fail not in ("error", "drop"):
            raise ValueError(f"on_fail must be error or drop (got {self.on_fail!r})")
        object.__setattr__(self, "aca_mix", parse_aca_mix(",".join(f"{k}={v}" for k, v in self.aca_mix)))


class SFTRow(ItemColumns, PromptCompletionRow):
    """One SFT example: TRL's conversational prompt/completion plus flat item columns."""

    perturbation: str | None = None
    pair_id: str | None = None
    gap: str | None = None
    gap_variable: str | None = None
    target_kind: str
    p_hat: float | None = None  # the policy's success rate on the problem, where a probe measured it


def sft_row(item: Item, protocol: str, completion: str, kind: str) -> SFTRow:
    """The row of ``item`` with ``completion`` as the assistant's answer."""
    extra = item.model_extra or {}
    return SFTRow(
        prompt=get_protocol(protocol).messages(item), completion=[{"role": "assistant", "content": completion}],
        id=item.id, question=item.question, answers=item.answers, label=item.label, category=item.category,
        perturbation=item.perturbation, source=item.source, pair_id=extra.get("pair_id"), gap=item.gap,
        gap_variable=extra.get("gap_variable"), protocol=protocol, target_kind=kind,
    )


RowT = TypeVar("RowT", bound=BaseModel)


@dataclass
class SFTBuild(Generic[RowT]):
    """Built rows (SFT rows, or DPO pairs), how many of each kind, and the items left out (id, why)."""

    rows: list[RowT]
    counts: dict[str, int]
    dropped: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def of(cls, rows: list[RowT], kind: Callable[[RowT], str], dropped: list[tuple[str, str]]) -> SFTBuild[RowT]:
        """The build of ``rows``, counted by ``kind(row)`` (sorted by kind)."""
        return cls(rows, dict(sorted(Counter(kind(r) for r in rows).items())), dropped)


def assign_aca(items: Sequence[Item], mix: Sequence[tuple[str, float]], seed: int) -> dict[str, str]:
    """ELICIT / COND / ABS for each unanswerable item: exact shares (largest remainder), seeded order.

    Example:
        >>> items = [Item(id=str(i), question="q", answers=[], label="unanswerable") for i in range(5)]
        >>> sorted(Counter(assign_aca(items, (("ELICIT", 0.6), ("ABS", 0.4)), seed=0).values()).items())
        [('ABS', 2), ('ELICIT', 3)]
    """
    ids = [it.id for it in items if it.label == "unanswerable"]
    n = len(ids)
    quotas = [(name, share * n) for name, share in mix]
    counts = {name: int(q) for name, q in quotas}
    by_remainder = sorted(quotas, key=lambda nq: -(nq[1] - int(nq[1])))
    for name, _ in by_remainder[: n - sum(counts.values())]:
        counts[name] += 1
    choices = [name for name, _ in mix for _ in range(counts[name])]
    random.Random(f"abstain-sft:aca:{seed}").shuffle(choices)
    return dict(zip(ids, choices, strict=True))


def build_sft(items: Iterable[Item], config: SFTConfig,
              on_progress: Callable[[int], None] | None = None) -> SFTBuild:
    """Build, self-check and return the SFT rows of ``items`` (input order); see the module docstring."""
    items = list(items)
    choice = assign_aca(items, config.aca_mix, config.seed) if config.protocol == "aca" else {}
    built: list[tuple[Item, Target]] = []
    dropped: list[tuple[str, str]] = []
    for item in items:
        try:
            built.append((item, build_target(item, config.protocol, config.targets, choice.get(item.id, "ELICIT"))))
        except ValueError as exc:
            if config.on_fail == "error":
                raise
            dropped.append((item.id, str(exc)))
            if on_progress is not None:
                on_progress(1)
    verdicts = verify_targets([i for i, _ in built], [t.text for _, t in built], [t.intent for _, t in built],
                              config.protocol, on_batch=on_progress)
    rows: list[SFTRow] = []
    failures = []
    for (item, target), problem in zip(built, verdicts, strict=True):
        if problem is None:
            rows.append(sft_row(item, config.protocol, target.text, target.kind))
        else:
            failures.append((item.id, f"{target.kind} target fails the self-check: {problem}"))
    if failures and config.on_fail == "error":
        shown = "; ".join(f"{i}: {why}" for i, why in failures[:3])
        raise ValueError(f"{len(failures)} built targets fail abstain's scorer ({shown}); "
                         "set on_fail='drop' (--on-fail drop) to leave them out")
    return SFTBuild.of(rows, lambda r: r.target_kind, dropped + failures)


def write_sft(path: Any, rows: Iterable[BaseModel]) -> int:
    """Write rows atomically (abstain's JSONL writer); returns how many."""
    return write_jsonl(path, rows)


def token_lengths(texts: Sequence[str], tokenizer: Any = None) -> list[int]:
    """Tokens per text with SmolLM2's tokenizer (the bundled model's, loaded lazily) or ``tokenizer``."""
    if tokenizer is None:
        try:
            from transformers import AutoTokenizer
        except ImportError as exc:  # pragma: no cover - the hf extra is missing
            raise ImportError("token lengths need transformers: pip install 'abstain[hf]'") from exc
        from abstain.backends import bundled_model_dir

        tokenizer = AutoTokenizer.from_pretrained(bundled_model_dir())
    return [len(ids) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


def length_summary(lengths: Sequence[int]) -> dict[str, float]:
    """min / median / mean / p90 / max of a list of lengths.

    Example:
        >>> length_summary([10, 20, 30, 40])
        {'n': 4, 'min': 10, 'median': 25.0, 'mean': 25.0, 'p90': 40, 'max': 40}
    """
    if not lengths:
        return {"n": 0}
    ordered = sorted(lengths)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return {"n": len(ordered), "min": ordered[0], "median": float(statistics.median(ordered)),
            "mean": round(statistics.fmean(ordered), 1), "p90": p90, "max": ordered[-1]}
