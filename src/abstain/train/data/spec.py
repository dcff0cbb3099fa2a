"""What a recipe's ``data:`` section names, as a schema: a suite, a file, certified synthesis or UMWP pairs (or
synthesis and UMWP together), and how they are matched to the policy and subset.

The schema lives with the data it names; :mod:`abstain.train.data.build` builds the items, and
:mod:`abstain.train.recipe` holds it in a recipe.

Example:
    >>> DataSpec(synth={"n": 4, "seed": 5}).synth.n
    4
    >>> DataSpec(suite="quick", file="x.jsonl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for DataSpec
    ...
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from abstain.synth.seeds import check_seed

__all__ = ["STRICT", "DataSpec", "SynthSpec", "UMWPSpec", "ValidationSpec"]

STRICT = ConfigDict(extra="forbid", frozen=True)


class SynthSpec(BaseModel):
    """Certified synthetic problems drawn for training (never with the held-out seed or its questions)."""

    model_config = STRICT
    n: int = Field(ge=1, description="problems to draw")
    seed: int = Field(description="synthesis seed (the held-out benchmark's seed is refused)")
    unanswerable_ratio: float = Field(default=0.3, ge=0, le=1, description="share of missing-premise twins")
    hard_ratio: float = Field(default=0.0, ge=0, le=1, description="share of hard (model-uncertainty) items")
    pair_twins: bool = Field(default=False, description="each twin's answerable original goes in too")
    cue_match: bool = Field(default=True, description="twins keep their original's numeral count, vague words and "
                            "length (+-10%): no surface shortcut to the label (abstain cues)")
    match_hard: bool = Field(default=True, description="with cue_match and hard items: some twins are drawn at the hard "
                             "items' depths, so 'many numbers' is no sign of answerable (abstain.train.data.mix)")
    depths: tuple[int, ...] = Field(default=(2, 3, 4), description="solution-path depths, round robin (2: easiest)")

    @field_validator("seed")
    @classmethod
    def _not_heldout(cls, seed: int) -> int:
        check_seed(seed)
        return seed


class UMWPSpec(BaseModel):
    """Real-text pairs from UMWP, minus every evaluation item and near-duplicate (:mod:`abstain.data.real_text`)."""

    model_config = STRICT
    n: int | None = Field(default=None, ge=1, description="pairs to draw (each: an answerable problem and its "
                          "unanswerable twin); null: all that are left")
    seed: int = Field(default=0, description="draw seed")
    perturbations: list[str] | None = Field(default=None, description="keep only twins of these UMWP categories "
                                            "(missing_key_info, ambiguous_key_info, ...)")


class DataSpec(BaseModel):
    """Where the training items come from: one of ``suite``, ``file`` or ``synth`` — or ``synth`` and ``umwp``
    together (certified synthesis and real-text pairs, in the ratio of their sizes)."""

    model_config = STRICT
    suite: str | None = Field(default=None, description="a suite of `abstain eval`: every one is kept out of "
                              "training (abstain.data.guard) unless the recipe's allow_eval_suites names it")
    file: str | None = Field(default=None, description="a JSONL file of items (interchange format)")
    synth: SynthSpec | None = Field(default=None, description="certified synthesis")
    umwp: UMWPSpec | None = Field(default=None, description="real-text UMWP pairs (alone or with synth)")
    limit: int | None = Field(default=None, ge=1, description="a balanced subset of this many items")
    seed: int = Field(default=0, description="seed of the subset")
    probe: str | None = Field(default=None, description="problems matched to the policy: a probe of it on these "
                              "items (`abstain probe`: probe.jsonl or its folder); only problems whose answerable "
                              "original has p_range[0] < p-hat < p_range[1] are kept, each twin with its original")
    p_range: tuple[float, float] | None = Field(default=(0.0, 1.0), description="open interval of p-hat to keep "
                                                "(probe); null: keep every problem, its p-hat recorded (what "
                                                "rl_ua reads: p-hat 0 is 'beyond me')")

    @model_validator(mode="after")
    def _one_source(self) -> DataSpec:
        given = [name for name in ("suite", "file", "synth", "umwp") if getattr(self, name) is not None]
        if not given or (len(given) > 1 and set(given) != {"synth", "umwp"}):
            raise ValueError(f"give one of suite, file, synth or umwp, or synth and umwp together (got {given or 'none'})")
        if self.suite is not None:
            from abstain.data.suites import suite

            suite(self.suite)  # a known suite (whether the run may train on it: Recipe.allow_eval_suites)
        return self


class ValidationSpec(DataSpec):
    """``validation:`` of a recipe: items the policy answers while it trains, scored like ``abstain eval``.

    The items come as a :class:`DataSpec`'s (a suite is allowed here: validation is not training); ``every``
    N optimizer steps (and at the end) the policy answers them under ``protocol``, greedily by default, the answers
    are split over the processes and scored by abstain's own scorer and metrics, and the numbers are logged with an
    ``eval_`` prefix to ``metrics.jsonl`` and kept in ``validation.json``. ``metric`` (``mode``: max or min) names
    the best validation, whose checkpoint is kept; ``final: best`` makes ``final/`` that checkpoint's model.

    Example:
        >>> ValidationSpec(suite="mip-gsm8k-val", limit=32, every=10, metric="ab.f1", final="best").final
        'best'
    """

    protocol: str | None = Field(default=None, description="the protocol asked (default: the recipe's)")
    every: int | None = Field(default=None, ge=1, description="validate every N optimizer steps (and at the end); "
                              "null: once, at the end")
    max_new_tokens: int = Field(default=128, ge=1, description="generation budget per answer")
    temperature: float = Field(default=0.0, ge=0, description="0: greedy")
    metric: str = Field(default="ab.f1", description="the metric (a key of abstain's metrics.json) that picks the "
                        "best validation and its checkpoint")
    mode: Literal["max", "min"] = Field(default="max", description="whether a higher or a lower metric is better")
    final: Literal["last", "best"] = Field(default="last", description="what final/ holds: the last step's model, "
                                           "or the best validation's checkpoint (every must be a multiple of "
                                           "save_steps)")
