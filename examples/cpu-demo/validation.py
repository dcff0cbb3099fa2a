"""The validation split of the shortcut ablation: synthesis seed 77, cue-matched and plain pairs, one file.

    python examples/cpu-demo/validation.py runs/ablation/val     # writes val.jsonl (192 items) there
    python examples/cpu-demo/validation.py runs/ablation/val-large --seed 78 --n 384   # 768 items


Seed 77 (and 78, the larger split that decided between two arms the first could not separate) is neither the held-out benchmark's seed nor any training seed (21, 33); the transfer suite is not
touched. The cue-matched pairs (``val-cue``: 48 pairs whose twins state as many numbers as their originals)
measure discrimination the numeral count cannot give; the plain pairs (``val-plain``) the shortcut-prone
layout the earlier recipe was chosen on. ``meta.benchmark`` names each half, so every report splits them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from abstain.schema import write_jsonl
from abstain.synth import SynthConfig, generate_missing_premise, heldout_questions


def main(folder: str, seed: int = 77, n: int = 96) -> None:
    """Write ``n`` items per half (``n / 2`` pairs) of synthesis seed ``seed`` to ``folder/val.jsonl``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    items = []
    for name, cue in (("val-cue", True), ("val-plain", False)):
        config = SynthConfig(n=n, seed=seed, cue_match=cue, exclude_questions=heldout_questions())
        items += [item.model_copy(update={"meta": {**item.meta, "benchmark": name}})
                  for item in generate_missing_premise(config)]
    written = write_jsonl(out / "val.jsonl", items)
    print(f"wrote {written} validation items -> {out / 'val.jsonl'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default="runs/ablation/val")
    parser.add_argument("--seed", type=int, default=77, help="synthesis seed (never 21, 33 or the held-out 90417)")
    parser.add_argument("--n", type=int, default=96, help="items per half (cue-matched, plain)")
    args = parser.parse_args()
    main(args.folder, args.seed, args.n)
