"""Import each named abstain module first, alone, in a process of its own: ``python tests/import_alone.py MOD ...``.

Prints one JSON line per module: ``{"module": ..., "code": 0 or 1, "error": traceback tail}``; two at a time.

The third-party libraries the package builds on (torch, transformers, TRL ...) are imported once, here, and
each module is then imported in a fork of this process, where no ``abstain`` module is loaded yet: the order
of abstain's own imports is what a fresh interpreter would run (a cycle still fails), without paying seven
seconds of TRL per training module.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import traceback

PRELOAD = ("numpy", "pydantic", "typer", "rich", "httpx", "yaml", "sympy", "math_verify", "torch", "transformers",
           "accelerate", "peft", "datasets", "trl", "trl.trainer.grpo_trainer", "trl.trainer.sft_trainer", "inspect_ai")


def _child(module: str, report: str) -> None:
    try:
        importlib.import_module(module)
        code, error = 0, ""
    except BaseException:  # noqa: BLE001 - every failure is the module's
        code, error = 1, traceback.format_exc()[-2000:]
    with open(report, "w", encoding="utf-8") as f:
        json.dump({"module": module, "code": code, "error": error}, f)
    os._exit(0)


def main(modules: list[str], parallel: int = 2) -> None:
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    assert not [m for m in sys.modules if m == "abstain" or m.startswith("abstain.")], "abstain preloaded"
    folder = tempfile.mkdtemp(prefix="import-alone-")
    running: dict[int, tuple[str, str]] = {}
    pending = list(modules)
    while pending or running:
        while pending and len(running) < parallel:
            module = pending.pop(0)
            report = os.path.join(folder, f"{module}.json")
            pid = os.fork()
            if pid == 0:
                _child(module, report)
            running[pid] = (module, report)
        pid, status = os.wait()
        module, report = running.pop(pid)
        if os.path.exists(report):
            with open(report, encoding="utf-8") as f:
                print(f.read(), flush=True)
        else:
            print(json.dumps({"module": module, "code": 1, "error": f"died with wait status {status}"}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
