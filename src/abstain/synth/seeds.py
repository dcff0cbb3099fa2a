"""The seed of the held-out benchmark, which training data must never be generated with.

Every synthesised problem depends only on ``(seed, index)``, so a training set drawn with the
held-out seed would contain the benchmark itself. The generators refuse that seed unless they are
building the held-out file (``allow_heldout_seed=True``, used only by :mod:`abstain.synth.heldout`).

Example:
    >>> check_seed(HELDOUT_SEED + 1)
    >>> check_seed(HELDOUT_SEED)
    Traceback (most recent call last):
    ...
    ValueError: seed 90417 is reserved for the held-out benchmark (src/abstain/data/synth/heldout.jsonl); use another seed
"""

from __future__ import annotations

__all__ = ["HELDOUT_SEED", "check_seed"]

#: The held-out benchmark's seed. Training recipes never use it.
HELDOUT_SEED = 90417


def check_seed(seed: int, allow_heldout_seed: bool = False) -> None:
    """Raise when ``seed`` is the held-out seed and this is not the held-out build."""
    if seed == HELDOUT_SEED and not allow_heldout_seed:
        raise ValueError(
            f"seed {seed} is reserved for the held-out benchmark (src/abstain/data/synth/heldout.jsonl); "
            "use another seed"
        )
