"""Rebuild the shipped BBQ subset from the upstream files (run from anywhere; needs no package).

    python make_subset.py /path/to/BBQ/data  # writes <Category>.jsonl here

For each of the six category files: 100 ambiguous-context and 100 disambiguated-context lines, drawn
with ``random.Random("bbq:<Category>:<condition>")`` over the line numbers and kept in upstream order,
copied byte for byte. Why a subset: the six upstream files are 10.5 MB; 1,200 lines are enough for
``abstentionbench-lite``'s 100 per label (see SOURCE.txt).
"""

import json
import random
import sys
from pathlib import Path

CATEGORIES = ("Age", "Disability_status", "Nationality", "Physical_appearance", "Religion", "Sexual_orientation")
PER_CONDITION = 100


def main(src: Path) -> None:
    for category in CATEGORIES:
        lines = (src / f"{category}.jsonl").read_bytes().splitlines(keepends=True)
        keep: set[int] = set()
        for condition in ("ambig", "disambig"):
            idx = [n for n, line in enumerate(lines)
                   if line.strip() and json.loads(line)["context_condition"] == condition]
            keep |= set(random.Random(f"bbq:{category}:{condition}").sample(idx, PER_CONDITION))
        Path(__file__).with_name(f"{category}.jsonl").write_bytes(b"".join(lines[n] for n in sorted(keep)))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
