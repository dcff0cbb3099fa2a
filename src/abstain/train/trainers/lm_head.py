"""TRL's fused LM head, scoring only the labelled positions on a CPU too (a third of a CPU GRPO step).

TRL (1.16) computes every trainer's per-token log-probabilities with a fused LM head
(``trl.trainer.utils.add_fused_lm_head``: the vocabulary projection in tiles, the logits never whole). On a
Triton device it projects only the positions whose label is not ``-100`` — the completion. Everywhere else it
projects *every* position, prompt included, because on a compiling device such as Neuron "the number of valid
positions would change the tile shapes on every batch and trigger a recompilation". A CPU compiles nothing,
so there this only multiplies the LM head's work by (prompt + completion) / completion: with SmolLM2's 49,152-row
head it was 42% of a cpu-demo GRPO step's training computation. :func:`compact_lm_head` makes TRL take its
compact (Triton-device) path on a CPU as well; the kernel itself is unchanged (its torch fallback), and so are
the values (``tests/test_train_lm_head.py``: log-probabilities and gradients equal either way). Measured on the
cpu-demo GRPO step: the training computation 36 s -> 28 s (AVX-512), 44 s -> 31 s (AVX2; docs/benchmarks.md).

Example::

    with compact_lm_head():
        trainer.train()
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["compact_lm_head"]


@contextmanager
def compact_lm_head() -> Iterator[bool]:
    """While open, TRL's fused LM head projects only labelled positions on a CPU; yields whether it could.

    A TRL without the fused head (older releases, which materialize the logits) is left as it is (False).
    """
    try:
        import trl.trainer.utils as trl_utils
    except ImportError:  # pragma: no cover - depends on the install
        yield False
        return
    original = getattr(trl_utils, "_use_triton", None)
    if original is None or getattr(original, "abstain_compact", False):  # no fused head, or already open
        yield False
        return
    from abstain.train.trainers.trl_guard import check_overrides

    check_overrides("trl.trainer.utils.")  # the private function replaced below takes what it took in TRL 1.16

    def compact(device):  # type: ignore[no-untyped-def]
        return device.type == "cpu" or original(device)

    compact.abstain_compact = True  # type: ignore[attr-defined]
    trl_utils._use_triton = compact
    try:
        yield True
    finally:
        trl_utils._use_triton = original
