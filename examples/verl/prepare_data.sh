#!/usr/bin/env bash
# The data for run_grpo_tiar.sh: a training mix of certified missing-premise problems (30% unanswerable
# twins, as the papers mix) and a validation set from another synthesis seed (never a held-out suite: the
# validation set chooses checkpoints), both asked with the `idk` protocol
# ("If you don't know the answer, reply with \boxed{I don't know.}"), which the ternary reward expects.
set -euo pipefail
DATA=${DATA:-./data}
mkdir -p "$DATA"
abstain synth --kind missing-premise --n 2000 --unanswerable-ratio 0.3 --seed 1 --out "$DATA/train.jsonl"
abstain export verl --data "$DATA/train.jsonl" --protocol idk --out "$DATA/train.parquet"
abstain synth --kind missing-premise --n 200 --unanswerable-ratio 0.3 --seed 2 --out "$DATA/val.jsonl"
abstain export verl --data "$DATA/val.jsonl" --protocol idk --out "$DATA/val.parquet"
