"""``python -m abstain.cli.reference_docs [FOLDER]``: write the generated reference pages into FOLDER
(docs/reference).

Without FOLDER, print them to stdout instead (each after a ``<!-- name -->`` line).
"""

from __future__ import annotations

import sys
from pathlib import Path

from abstain.cli.reference_docs import PAGES, page


def main(argv: list[str]) -> None:
    if not argv:
        for name in PAGES:
            print(f"<!-- {name} -->\n{page(name)}", end="")
        return
    folder = Path(argv[0])
    folder.mkdir(parents=True, exist_ok=True)
    for name in PAGES:
        (folder / name).write_text(page(name), encoding="utf-8")
        print(f"wrote {folder / name}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
