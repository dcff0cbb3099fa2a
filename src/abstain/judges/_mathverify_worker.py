"""Math-Verify worker: one JSON request per stdin line, ``1``/``0`` per stdout line.

Started by :class:`abstain.judges.answer._WorkerPool` so that calls from worker threads still get
Math-Verify's SIGALRM timeouts (they run here, on this process's main thread).
"""

from __future__ import annotations

import json
import sys

from abstain.judges.answer import _math_equal_inline


def main() -> None:
    for line in sys.stdin:
        req = json.loads(line)
        try:
            ok = _math_equal_inline(req["gold"], req["pred"], int(req["timeout"]))
        except Exception:  # noqa: BLE001 - an unparsable expression is simply not equal
            ok = False
        sys.stdout.write("1\n" if ok else "0\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
