#!/bin/bash
# The confidence measurement of docs/experiments/confidence.md: the bundled model and bundled-abstain on the one-step
# suite under answer_only and idk, every estimator but verbalized, on vLLM's CPU engine; then their comparison and
# the table. About 20 minutes per model on 2 cores (consistency:4 is four fifths of it).
#   bash examples/confidence/run.sh [OUT=runs/confidence]
set -euo pipefail
OUT=${1:-runs/confidence}
DATA=docs/experiments/confidence-one-step.jsonl   # examples/confidence/one_step_items.py writes it, byte for byte
for m in bundled bundled-abstain; do
  abstain eval --model "vllm:$m" --data "$DATA" --protocol answer_only,idk --max-tokens 96 \
    --lenient-format --confidence logprob,entropy,answer_prob,consistency:4,p_true --out "$OUT/$m"
done
abstain compare "$OUT/bundled" "$OUT/bundled-abstain" --out "$OUT/compare"
python examples/confidence/summarize.py "$OUT/bundled" "$OUT/bundled-abstain"
