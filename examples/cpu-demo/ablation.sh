#!/usr/bin/env bash
# The validation ablation behind the cpu-demo recipe (docs/experiments/shortcut.md): which training data,
# reward and sampling make GRPO learn discrimination the numeral-count shortcut cannot explain, without
# collapsing. Every knob is chosen on the validation split (synthesis seed 77, cue-matched + plain pairs);
# the transfer suite is not touched here. Every step resumes when rerun (a finished run is skipped).
#
#   bash examples/cpu-demo/ablation.sh [runs/ablation] [arm ...]     # no arm: all of them
#
# Arms (GRPO stage: the first 10 of 60 steps of 4 prompts x 4 samples <= 160 tokens, vLLM rollouts, lr 5e-5):
#   data   plain: the shipped SFT adapter (trained on plain pairs) + plain GRPO problems (seed 33)
#          cue:   SFT on cue-matched pairs (seed 21) + cue-matched GRPO problems (seed 33)
#   reward ternary: ternary reward, TIAR advantages (lambda 1): the earlier recipe
#          idk:     idk_binary with false_refusal_penalty -0.6 (always-abstain below always-answer), GRPO advantages
#   ds     off | on: dynamic sampling (groups with equal rewards dropped from the loss)
#   then levers on the best of them, e.g. plain-idk-on-pen45 plain-idk-on-pairs plain-idk-on-depth2
#   plain-idk-on-tiar plain-idk-on-stable (docs/experiments/shortcut.md)
set -euo pipefail
OUT=${1:-runs/ablation}
shift || true
VAL="$OUT/val/val.jsonl"
# eager vLLM: 10 s to start instead of a 1-3 min compile, ~8% fewer tokens/s (docs/benchmarks.md)
EVAL="--data $VAL --protocol idk --max-tokens 160 --batch-size 64 --resamples 1000 --backend-option eager=true"
STEPS=${STEPS:-60}   # the recipe's length (the arm validation picks is trained to it)
UNTIL=${UNTIL:-10}   # the ablation's budget: every arm's first UNTIL steps

[ -f "$VAL" ] || python examples/cpu-demo/validation.py "$OUT/val"

trained() { [ -f "$1/final/abstain_train.json" ]; }
resume() { [ -d "$1/checkpoints" ] && echo --resume || true; }

# SFT: the shipped adapter is the plain arm (cpu-demo-sft with cue_match: false, docs/experiments/cpu-demo.md)
sft() {
  trained "$OUT/sft-cue" || abstain train sft --recipe cpu-demo-sft --set data.synth.cue_match=true --set data.synth.match_hard=false \
    --out "$OUT/sft-cue" $(resume "$OUT/sft-cue")
}
# the plain arm's SFT: the first round's shipped adapter, kept in $OUT/round1-adapter (copied before a new one
# is shipped: cp -r src/abstain/data/models/bundled-abstain $OUT/round1-adapter)
adapter_of() { [ "$1" = plain ] && echo "$OUT/round1-adapter" || echo "$OUT/sft-cue"; }

# one GRPO arm: grpo DATA REWARD DS [LEVER ...]. Every arm is the same 60-step recipe trained --until $UNTIL
# (the ablation's fixed budget) and validated at that checkpoint; the arm validation picks is continued
# with --resume (bit-identical to an uninterrupted run). Levers on top of an arm:
#   tiar:   advantage tiar, lambda 0.3 (TruthRL's)     depth2: only depth-2 problems (easier: higher p)
#   stable: the papers' lr 1e-6 and KL 0.001           pen45:  false_refusal_penalty -0.45 (a smaller margin)
#   pairs:  each twin's original in the GRPO data too (contrastive pairs)
grpo() {
  local data=$1 reward=$2 ds=$3; shift 3
  local name="grpo-$data-$reward-ds$ds" cue=false
  [ "$data" = cue ] && cue=true
  local sets=(--set rollout=vllm --set "trl={rollout_eager: true}" --set "steps=$STEPS" --set save_steps=10
              --set save_total_limit=10
              --set "adapter=$(adapter_of "$data")" --set "data.synth.cue_match=$cue" --set data.synth.match_hard=false
              --set "dynamic_sampling=$([ "$ds" = on ] && echo true || echo false)")
  if [ "$reward" = idk ]; then
    sets+=(--set reward=idk_binary --set advantage=grpo --set "reward_config={false_refusal_penalty: -0.6}")
  else
    sets+=(--set reward=ternary --set advantage=tiar --set tiar_lambda=1.0)
  fi
  for lever in "$@"; do
    name="$name-$lever"
    case "$lever" in
      tiar) sets+=(--set advantage=tiar --set tiar_lambda=0.3) ;;
      depth2) sets+=(--set "data.synth.depths=[2]") ;;
      stable) sets+=(--set learning_rate=1.0e-6 --set beta=0.001) ;;
      pen45) sets+=(--set "reward_config={false_refusal_penalty: -0.45}") ;;
      pairs) sets+=(--set data.synth.pair_twins=true) ;;
      *) echo "unknown lever $lever" >&2; exit 2 ;;
    esac
  done
  local run="$OUT/$name"
  if ! trained "$run" && [ ! -f "$run/checkpoints/checkpoint-$UNTIL/trainer_state.json" ]; then
    abstain train grpo --recipe cpu-demo-grpo "${sets[@]}" --out "$run" --until "$UNTIL" $(resume "$run")
  fi
  abstain eval --model "vllm:$run/checkpoints/checkpoint-$UNTIL" $EVAL --out "$OUT/val-eval/$name-$UNTIL"
}

arms=("$@")
if [ ${#arms[@]} -eq 0 ]; then
  arms=(sft plain-ternary-off plain-ternary-on plain-idk-off plain-idk-on cue-ternary-off cue-ternary-on
        cue-idk-off cue-idk-on)
fi
for arm in "${arms[@]}"; do
  case "$arm" in
    sft)
      sft
      abstain eval --model "vllm:$OUT/round1-adapter" $EVAL --out "$OUT/val-eval/sft-plain"
      abstain eval --model "vllm:$OUT/sft-cue" $EVAL --out "$OUT/val-eval/sft-cue"
      abstain eval --model vllm:bundled $EVAL --out "$OUT/val-eval/base" ;;
    *-*-*) IFS=- read -r data reward ds levers <<< "$arm"; grpo "$data" "$reward" "$ds" ${levers//-/ } ;;
    *) echo "unknown arm $arm" >&2; exit 2 ;;
  esac
done
