"""The validation split of the shortcut ablation: synthesis seed 77, cue-matched and plain pairs, one file.

    python examples/cpu-demo/validation.py runs/ablation/val     # writes val.jsonl (192 items) there

Seed 77 is neither the held-out benchmark's seed nor any training seed (21, 33); the transfer suite is not
touched. The cue-matched pairs (``val-cue``: 48 pairs whose twins state as many numbers as their originals)
measure discrimination the numeral count cannot give; the plain pairs (``val-plain``) the shortcut-prone
layout the earlier recipe was chosen on. ``meta.benchmark`` names each half, so every report splits them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from abstain.schema import write_jsonl
from abstain.synth import SynthConfig, generate_missing_premise, heldout_questions


def main(folder: str) -> None:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    items = []
    for name, cue in (("val-cue", True), ("val-plain", False)):
        config = SynthConfig(n=96, seed=77, cue_match=cue, exclude_questions=heldout_questions())
        items += [item.model_copy(update={"meta": {**item.meta, "benchmark": name}})
                  for item in generate_missing_premise(config)]
    written = write_jsonl(out / "val.jsonl", items)
    print(f"wrote {written} validation items -> {out / 'val.jsonl'}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/ablation/val")
