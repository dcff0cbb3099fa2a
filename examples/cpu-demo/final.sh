#!/usr/bin/env bash
# The final comparison of the second cpu-demo round (docs/experiments/shortcut.md), run once, after every
# choice was made on validation (examples/cpu-demo/ablation.sh): six arms of the bundled SmolLM2-135M, the
# same evaluation budget for each, on the `transfer` suite (held-out synthesis in distribution; UMWP,
# MiP-GSM8K + GSM8K, TreeCut, SelfAware out of distribution), then the held-out synthetic benchmark (240
# balanced items). Every step resumes when rerun.
#
#   bash examples/cpu-demo/final.sh runs/ablation runs/final GRPO_RUN [REFERENCE_RUN]
#   ARMS="base sft-plain grpo-pick" bash examples/cpu-demo/final.sh ...     # a subset of the arms
#   ARMS="sft-plain sft-cue-3x" bash examples/cpu-demo/final.sh runs/ablation runs/final -   # no GRPO arm
#
# GRPO_RUN: the arm validation picked, trained to its last step; REFERENCE_RUN: the earlier reward (ternary +
# TIAR) on the same data at the ablation's budget (a checkpoint folder), for contrast.
set -euo pipefail
ABL=${1:-runs/ablation}
OUT=${2:-runs/final}
PICK=${3:?the picked GRPO run folder}
REF=${4:-}   # needed only by the grpo-ternary-tiar arm
ENGINE="--backend-option eager=true"
EVAL="--suite transfer --protocol idk --max-tokens 160 --batch-size 64 --resamples 1000 $ENGINE"
HELDOUT="--suite heldout --limit 240 --protocol idk --max-tokens 160 --batch-size 64 --resamples 1000 $ENGINE"

# sft-plain: the first round's shipped adapter (docs/experiments/cpu-demo.md), copied to $ABL/round1-adapter
# before a new one was shipped
declare -A MODEL=(
  [base]=vllm:bundled
  [base-5shot]=vllm:bundled
  [sft-plain]="vllm:$ABL/round1-adapter"
  [sft-cue]="vllm:$ABL/sft-cue"
  [sft-cue-3x]="vllm:$ABL/sft-cue-3x"        # three times the SFT budget (validation's later pick)
  [sft-plain-3x]="vllm:$ABL/sft-plain-3x"
  [grpo-ternary-tiar]="vllm:$REF"
  [grpo-pick]="vllm:$PICK"
)
read -r -a ARMS <<< "${ARMS:-base base-5shot sft-plain sft-cue grpo-ternary-tiar grpo-pick}"

for arm in "${ARMS[@]}"; do
  extra=""
  [ "$arm" = base-5shot ] && extra="--shots 5 --shots-unanswerable 1"
  abstain eval --model "${MODEL[$arm]}" $EVAL $extra --out "$OUT/eval/$arm"
done
abstain compare $(for a in "${ARMS[@]}"; do echo "$OUT/eval/$a"; done) \
  $(for a in "${ARMS[@]}"; do echo --label "$a"; done) --out "$OUT/compare"
for arm in base sft-plain sft-cue sft-cue-3x sft-plain-3x grpo-pick; do
  [[ " ${ARMS[*]} " == *" $arm "* ]] || continue
  abstain eval --model "${MODEL[$arm]}" $HELDOUT --out "$OUT/eval-heldout/$arm"
done
python examples/cpu-demo/table.py "$OUT/eval" "${ARMS[@]}"
