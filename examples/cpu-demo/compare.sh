#!/usr/bin/env bash
# The cpu-demo comparison: six arms of the bundled SmolLM2-135M, the same evaluation budget for each,
# on the `transfer` suite (held-out synthesis in distribution; UMWP, MiP-GSM8K + GSM8K, TreeCut,
# SelfAware out of distribution). Every step resumes when rerun. About 80 minutes on 2 CPU cores
# (pipeline ~22, the two other GRPO arms ~6 each, six transfer evaluations ~5 each, three held-out ~4 each).
#
#   bash examples/cpu-demo/compare.sh [runs/cpu-demo]
set -euo pipefail
OUT=${1:-runs/cpu-demo}
EVAL="--suite transfer --protocol idk --max-tokens 160 --batch-size 32 --resamples 1000"

# 1. the pipeline: cold-start SFT, then GRPO with TIAR on the SFT adapter (the shipped bundled-abstain)
abstain train pipeline --recipe cpu-demo --out "$OUT"
# 2. the other GRPO arms: the same stage, the same steps, from the same SFT adapter
for ADV in grpo coupled; do
  abstain train grpo --recipe cpu-demo-grpo --set "adapter=$OUT/sft" --set "advantage=$ADV" \
    --out "$OUT/grpo-$ADV" $( [ -d "$OUT/grpo-$ADV/checkpoints" ] && echo --resume )
done
# 3. every arm evaluated greedy with the same token budget
abstain eval --model bundled $EVAL --out "$OUT/eval/base"
abstain eval --model bundled $EVAL --shots 5 --shots-unanswerable 1 --out "$OUT/eval/base-fewshot"
abstain eval --model "hf:$OUT/sft/final" $EVAL --out "$OUT/eval/sft"
abstain eval --model "hf:$OUT/grpo-grpo/final" $EVAL --out "$OUT/eval/sft-grpo-ternary"
abstain eval --model "hf:$OUT/grpo/final" $EVAL --out "$OUT/eval/sft-grpo-tiar"
abstain eval --model "hf:$OUT/grpo-coupled/final" $EVAL --out "$OUT/eval/sft-grpo-coupled"
# 4. one report with every arm side by side
abstain compare "$OUT/eval/base" "$OUT/eval/base-fewshot" "$OUT/eval/sft" "$OUT/eval/sft-grpo-ternary" \
  "$OUT/eval/sft-grpo-tiar" "$OUT/eval/sft-grpo-coupled" \
  --label base --label base-5shot --label sft --label ternary --label tiar --label coupled --out "$OUT/compare"
# 5. in distribution, larger: 240 balanced items of the held-out synthetic benchmark (the SFT table)
HELDOUT="--suite heldout --limit 240 --protocol idk --max-tokens 160 --batch-size 32 --resamples 1000"
abstain eval --model bundled $HELDOUT --out "$OUT/eval-heldout/base"
abstain eval --model "hf:$OUT/sft/final" $HELDOUT --out "$OUT/eval-heldout/sft"
abstain eval --model "hf:$OUT/grpo/final" $HELDOUT --out "$OUT/eval-heldout/sft-grpo-tiar"
