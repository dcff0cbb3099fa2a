"""Generation speed of two llama.cpp builds of llama-cpp-python on the bundled GGUF, measured in one run.

Why the Makefile's build has the flags it has (docs/development.md#the-llamacpp-server): the portable AVX2 build
(x86-64-v3, no AVX-512, no AMX) that ``make install-server`` compiles, against a baseline build on the same
machine, e.g. one with AVX-512 on top. Each build runs in its own interpreter (``PYTHONPATH`` set to a folder
holding its ``llama_cpp`` package, e.g. an unpacked wheel; ``installed`` is the venv's own), loads the bundled
GGUF and generates greedily from the same chat prompts, as the test server does (1 thread by default); the best of
``--repeat`` runs counts and the runs alternate between the builds.

    python bench/bench_llama_build.py --baseline /path/to/avx512 [--candidate installed] [--tokens 96] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from _results import report  # bench/_results.py (scripts run from bench/)

CHILD = r"""
import json, sys, time
import llama_cpp
from abstain.backends.bundled import gguf_path
tokens, threads = int(sys.argv[1]), int(sys.argv[2])
llm = llama_cpp.Llama(str(gguf_path()), n_ctx=1024, n_threads=threads, n_threads_batch=threads, verbose=False)
prompts = ["What is 17 * 23? Think step by step.", "A train leaves at 3 pm and travels 120 km at 60 km/h. When does it arrive?",
           "Name three prime numbers above 50.", "Tom has some apples and gives 3 away. How many does he have left?"]
llm.create_chat_completion([{"role": "user", "content": "Hi"}], max_tokens=4)  # warm-up
start, made = time.perf_counter(), 0
for p in prompts:
    out = llm.create_chat_completion([{"role": "user", "content": p}], max_tokens=tokens, temperature=0.0)
    made += out["usage"]["completion_tokens"]
elapsed = time.perf_counter() - start
print(json.dumps({"tokens": made, "seconds": elapsed,
                  "features": llama_cpp.llama_print_system_info().decode(errors="replace").strip()}))
"""


def run(build: str, tokens: int, threads: int) -> dict:
    env = dict(os.environ)
    if build != "installed":
        env["PYTHONPATH"] = build + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", CHILD, str(tokens), str(threads)], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{build}: exited with {done.returncode}\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="folder holding the baseline build's llama_cpp package")
    parser.add_argument("--candidate", default="installed", help="the build measured against it (default: the venv's)")
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    best: dict[str, dict] = {}
    for _ in range(args.repeat):
        for name, build in (("baseline", args.baseline), ("candidate", args.candidate)):
            got = run(build, args.tokens, args.threads)
            if name not in best or got["seconds"] < best[name]["seconds"]:
                best[name] = got
    rate = {k: v["tokens"] / v["seconds"] for k, v in best.items()}
    result = {"threads": args.threads, "tokens_per_s": rate, "candidate_over_baseline": rate["candidate"] / rate["baseline"],
              "features": {k: v["features"] for k, v in best.items()}, "builds": {"baseline": args.baseline,
                                                                                 "candidate": args.candidate}}
    report("bench_llama_build", result)


if __name__ == "__main__":
    main()
