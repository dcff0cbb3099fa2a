"""Validation while a policy trains: a recipe's ``validation:`` items answered every N steps and at the end, scored
like ``abstain eval``, the best validation's checkpoint kept.

The prompts are the protocol's, the answers greedy by default (:class:`~abstain.train.data.spec.ValidationSpec`),
generated on every process for its share of the items (the model each process holds; the answers gathered on the
main process), scored by :func:`abstain.scoring.score_completions` with the rule judge and
:func:`abstain.metrics.compute_metrics` — the numbers of ``abstain eval`` (``r1.u_ref``, ``ab.f1`` …) plus the share
of responses with a well-formed boxed decision. Each validation is logged with an ``eval_`` prefix (``metrics.jsonl``)
and appended to ``validation.json`` with the best one so far: the recipe's ``validation.metric`` picks it, and its
checkpoint is kept from rotation (transformers' ``best_model_checkpoint``). ``final: best`` makes ``final/`` that
checkpoint's model (:func:`load_best`).

Example (a model in memory, e.g. after a run)::

    numbers = report(items, answers(model, tokenizer, items, "idk", max_new_tokens=128), "idk")
    numbers["boxed"], numbers["r1.u_ref"], numbers["r1.a_fu"]
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from abstain.backends.base import GenerationConfig, MissingDependencyError
from abstain.metrics import MetricsConfig, compute_metrics
from abstain.protocols import get_protocol
from abstain.schema import Item
from abstain.scoring import score_completions

try:
    from transformers import TrainerCallback
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependencyError(f"training needs transformers: pip install 'abstain[train]' ({exc})") from exc

__all__ = ["VALIDATION_KEYS", "ValidationCallback", "answers", "load_best", "report", "validation_callback"]

VALIDATION_KEYS = ("r1.a_acc", "r1.a_fu", "r1.u_ref", "ab.precision", "ab.recall", "ab.f1", "ua.acc",
                   "aca.behavior_score", "truth.acc", "truth.hallucination", "truth.abstain", "truth.truthfulness")
RECORD = "validation.json"


def answers(model: Any, tokenizer: Any, items: Sequence[Item], protocol: str, max_new_tokens: int = 128,
            temperature: float = 0.0, batch_size: int = 16) -> list[str]:
    """The answers of ``model`` (in memory, e.g. being trained) to ``items`` under ``protocol``; its mode restored."""
    from abstain.backends.hf import HFBackend, HFOptions

    if not items:
        return []
    was_training = model.training
    backend = HFBackend.from_model(model, tokenizer, "validation", HFOptions(batch_size=batch_size))
    try:
        proto = get_protocol(protocol)
        texts = backend.generate([proto.messages(i) for i in items],
                                 GenerationConfig(max_new_tokens=max_new_tokens, temperature=temperature))
    finally:
        if was_training:
            model.train()
    return [t[0] for t in texts]


def report(items: Sequence[Item], texts: Sequence[str], protocol: str, resamples: int = 0,
           metric: str | None = None) -> dict[str, Any]:
    """The responses scored like ``abstain eval``: the headline numbers (and ``metric``), CIs when ``resamples``."""
    rows = score_completions(list(items), list(texts), protocol=protocol)
    metrics = compute_metrics(rows, MetricsConfig(resamples=resamples))
    if metric is not None and metric not in metrics:
        numeric = sorted(k for k, v in metrics.items() if isinstance(v, (int, float)) and not k.endswith("_ci"))
        raise ValueError(f"validation.metric {metric!r} is not one of abstain's metrics for these items: "
                         f"{', '.join(numeric)}")
    out: dict[str, Any] = {"items": len(rows), "boxed": sum(r.format_ok for r in rows) / max(1, len(rows))}
    for key in (*VALIDATION_KEYS, *([metric] if metric and metric not in VALIDATION_KEYS else [])):
        out[key] = metrics.get(key)
        if resamples:
            out[f"{key}_ci"] = metrics.get(f"{key}_ci")
    out["examples"] = [{"id": r.id, "label": r.label, "perturbation": r.perturbation, "response": r.response}
                       for r in rows[:6]]
    return out


class ValidationCallback(TrainerCallback):
    """A transformers callback (built by :func:`validation_callback`) that validates every ``spec.every`` steps and
    at the end of training, on every process (each answers its share of the items)."""

    def __init__(self, spec: Any, items: list[Item], protocol: str, run_path: Path) -> None:
        self.spec, self.items, self.protocol, self.path = spec, items, protocol, run_path
        self.trainer: Any = None  # set by validation_callback
        self.done: set[int] = set()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.spec.every and state.global_step % self.spec.every == 0:
            self._validate(args, state, final=state.global_step >= state.max_steps)
        return control

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if state.global_step >= state.max_steps and state.global_step not in self.done:
            self._validate(args, state, final=True)
        return control

    def _validate(self, args: Any, state: Any, final: bool) -> None:
        from accelerate.utils import broadcast_object_list, gather_object
        from transformers import Trainer

        trainer = self.trainer
        world, rank = trainer.accelerator.num_processes, trainer.accelerator.process_index
        share = list(range(rank, len(self.items), world))
        model = trainer.accelerator.unwrap_model(trainer.model)
        texts = answers(model, trainer.processing_class, [self.items[i] for i in share], self.protocol,
                        self.spec.max_new_tokens, self.spec.temperature)
        gathered = gather_object([(i, t) for i, t in zip(share, texts, strict=True)])
        numbers: list[Any] = [None]
        if trainer.accelerator.is_main_process:
            ordered = [t for _, t in sorted(gathered)]
            numbers[0] = report(self.items, ordered, self.protocol, resamples=1000 if final else 0,
                                metric=self.spec.metric)
        numbers = broadcast_object_list(numbers) if world > 1 else numbers
        result = numbers[0]
        self.done.add(state.global_step)
        value = result.get(self.spec.metric)
        better = value is not None and not (isinstance(value, float) and math.isnan(value)) and (
            state.best_metric is None or (value > state.best_metric if self.spec.mode == "max"
                                          else value < state.best_metric))
        saved = state.global_step % args.save_steps == 0 or state.global_step >= state.max_steps
        if better and saved:
            state.best_metric = value
            state.best_model_checkpoint = str(Path(args.output_dir) / f"checkpoint-{state.global_step}")
        logs = {f"eval_{k}": v for k, v in result.items() if isinstance(v, (int, float)) and v is not None}
        should_log = trainer.control.should_log  # the step's own log comes after on_step_end: on_log resets this
        Trainer.log(trainer, logs)  # transformers' own: TRL's log would fold its pending training metrics in
        trainer.control.should_log = should_log
        if trainer.accelerator.is_main_process:
            self._record(state, result)

    def _record(self, state: Any, result: dict[str, Any]) -> None:
        path = self.path / RECORD
        record = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"history": []}
        record["history"] = [h for h in record["history"] if h["step"] != state.global_step]
        record["history"].append({"step": state.global_step, **result})
        record.update({"metric": self.spec.metric, "mode": self.spec.mode, "final": self.spec.final,
                       "best_metric": state.best_metric, "best_checkpoint": state.best_model_checkpoint,
                       "protocol": self.protocol, "last": {"step": state.global_step, **result}})
        path.write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")


def validation_callback(recipe: Any, run: Any, trainer: Any) -> ValidationCallback | None:
    """Attach a recipe's ``validation:`` to ``trainer`` (None when the recipe has none). Under FSDP / ZeRO-3 it was
    refused up front (:func:`~abstain.train.trainers.policy.resolve_policy`): each process generates on its own share
    with the model it holds, which sharded weights are not."""
    spec = recipe.validation
    if spec is None:
        return None
    from abstain.train.data.build import load_validation_items

    # resolve_policy refused validation with sharded weights before anything was written (DDP, ZeRO-1/2 run it)
    assert run.policy is None or not run.policy.sharding.shards_weights, "validation with sharded weights"
    items = load_validation_items(spec)
    callback = ValidationCallback(spec, items, spec.protocol or recipe.protocol, run.path)
    callback.trainer = trainer
    trainer.add_callback(callback)
    return callback


def load_best(trainer: Any, recipe: Any) -> int | None:
    """For ``validation.final: best``: load the best validation's checkpoint into ``trainer``'s model (transformers'
    own loader: LoRA adapters, full weights, sharded files); its step, or None when there is nothing to load."""
    spec = recipe.validation
    best = trainer.state.best_model_checkpoint
    if spec is None or spec.final != "best" or best is None or not Path(best).is_dir():
        return None
    trainer._load_best_model()  # transformers' Trainer: what load_best_model_at_end runs
    return int(Path(best).name.rsplit("-", 1)[-1])
