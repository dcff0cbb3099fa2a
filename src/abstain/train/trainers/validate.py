"""The quick look after training: a model in memory, greedy, on validation items, scored like ``abstain eval``.

For choosing a mix, epochs or a learning rate against a validation split (never the held-out benchmark):
the prompts are the protocol's, the scoring is :func:`abstain.scoring.score_completions` with the rule
judge, and the numbers are the metrics' own (``r1.u_ref``, ``r1.a_fu``, ``r1.a_acc``, ``ab.f1`` …) plus the
share of responses with a well-formed boxed decision.

Example (after a run; ``trainer`` holds the model)::

    report = validate(trainer.model, tokenizer, items, "idk", max_new_tokens=128)
    report["boxed"], report["r1.u_ref"], report["r1.a_fu"]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from abstain.backends.base import GenerationConfig
from abstain.metrics import MetricsConfig, compute_metrics
from abstain.protocols import get_protocol
from abstain.schema import Item
from abstain.scoring import score_completions

__all__ = ["VALIDATION_KEYS", "validate"]

VALIDATION_KEYS = ("r1.a_acc", "r1.a_fu", "r1.u_ref", "ab.precision", "ab.recall", "ab.f1", "ua.acc",
                   "aca.behavior_score")


def validate(model: Any, tokenizer: Any, items: Sequence[Item], protocol: str, max_new_tokens: int = 128,
             batch_size: int = 16, resamples: int = 0) -> dict[str, Any]:
    """Greedy responses of ``model`` to ``items`` under ``protocol``, scored; the headline numbers."""
    from abstain.backends.hf import HFBackend, HFOptions

    was_training = model.training
    backend = HFBackend.from_model(model, tokenizer, "validation", HFOptions(batch_size=batch_size))
    try:
        proto = get_protocol(protocol)
        texts = backend.generate([proto.messages(i) for i in items], GenerationConfig(max_new_tokens=max_new_tokens))
    finally:
        if was_training:
            model.train()
    rows = score_completions(list(items), [t[0] for t in texts], protocol=protocol)
    metrics = compute_metrics(rows, MetricsConfig(resamples=resamples))
    out: dict[str, Any] = {"items": len(rows), "boxed": sum(r.format_ok for r in rows) / max(1, len(rows))}
    for key in VALIDATION_KEYS:
        out[key] = metrics.get(key)
        if resamples:
            out[f"{key}_ci"] = metrics.get(f"{key}_ci")
    out["examples"] = [{"id": r.id, "label": r.label, "perturbation": r.perturbation, "response": r.response}
                       for r in rows[:6]]
    return out
