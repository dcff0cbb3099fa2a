"""Math-Verify worker: one JSON request per stdin line; ``1``, ``0`` or ``E <why>`` per stdout line.

``{"ping": 1}`` is answered ``P`` (the pool's liveness check before it reuses an idle worker).

Started by :class:`abstain.judges.answer._WorkerPool` so that calls from worker threads still get
Math-Verify's SIGALRM timeouts (they run here, on this process's main thread). A timeout or an
exception is answered ``E …``: the caller turns it into a judge error, never into "not equal".
"""

from __future__ import annotations

import json
import sys

from abstain.judges.answer import MathVerifyError, _math_equal_inline


def main() -> None:
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("ping"):
            sys.stdout.write("P\n")
            sys.stdout.flush()
            continue
        try:
            answer = "1" if _math_equal_inline(req["gold"], req["pred"], int(req["timeout"])) else "0"
        except MathVerifyError as exc:
            answer = "E " + " ".join(str(exc).split())
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
