#!/usr/bin/env bash
# The validation ablation behind the cpu-demo recipe (docs/experiments/shortcut.md): which training data,
# reward and sampling make GRPO learn discrimination the numeral-count shortcut cannot explain, without
# collapsing. Every knob is chosen on the validation split (synthesis seed 77, cue-matched + plain pairs);
# the transfer suite is not touched here. Every step resumes when rerun (a finished run is skipped).
#
#   bash examples/cpu-demo/ablation.sh [runs/ablation] [arm ...]     # no arm: all of them
#
# Arms (GRPO stage, 20 steps of 4 prompts x 4 samples <= 160 tokens, vLLM rollouts, lr 5e-5):
#   data   plain: the shipped SFT adapter (trained on plain pairs) + plain GRPO problems (seed 33)
#          cue:   SFT on cue-matched pairs (seed 21) + cue-matched GRPO problems (seed 33)
#   reward ternary: ternary reward, TIAR advantages (lambda 1): the earlier recipe
#          idk:     idk_binary with false_refusal_penalty -0.6 (always-abstain below always-answer), GRPO advantages
#   ds     off | on: dynamic sampling (groups with equal rewards dropped from the loss)
set -euo pipefail
OUT=${1:-runs/ablation}
shift || true
VAL="$OUT/val/val.jsonl"
EVAL="--data $VAL --protocol idk --max-tokens 160 --batch-size 64 --resamples 1000"
STEPS=${STEPS:-20}

[ -f "$VAL" ] || python examples/cpu-demo/validation.py "$OUT/val"

trained() { [ -f "$1/final/abstain_train.json" ]; }
resume() { [ -d "$1/checkpoints" ] && echo --resume || true; }

# SFT: the shipped adapter is the plain arm (cpu-demo-sft with cue_match: false, docs/experiments/cpu-demo.md)
sft() {
  trained "$OUT/sft-cue" || abstain train sft --recipe cpu-demo-sft --set data.synth.cue_match=true \
    --out "$OUT/sft-cue" $(resume "$OUT/sft-cue")
}
adapter_of() { [ "$1" = plain ] && python -c "from abstain.backends.adapted import bundled_abstain_adapter as a; print(a())" \
  || echo "$OUT/sft-cue"; }
model_of() { [ "$1" = plain ] && echo vllm:bundled-abstain || echo "vllm:$OUT/sft-cue"; }

# one GRPO arm: grpo DATA REWARD DS [extra --set ...]
grpo() {
  local data=$1 reward=$2 ds=$3; shift 3
  local name="grpo-$data-$reward-ds$ds${SUFFIX:-}" cue=false
  [ "$data" = cue ] && cue=true
  local sets=(--set rollout=vllm --set "steps=$STEPS" --set save_steps=10 --set save_total_limit=10
              --set "adapter=$(adapter_of "$data")" --set "data.synth.cue_match=$cue"
              --set "dynamic_sampling=$([ "$ds" = on ] && echo true || echo false)")
  if [ "$reward" = idk ]; then
    sets+=(--set reward=idk_binary --set advantage=grpo --set "reward_config={false_refusal_penalty: -0.6}")
  else
    sets+=(--set reward=ternary --set advantage=tiar --set tiar_lambda=1.0)
  fi
  trained "$OUT/$name" || abstain train grpo --recipe cpu-demo-grpo "${sets[@]}" "$@" --out "$OUT/$name" \
    $(resume "$OUT/$name")
  abstain eval --model "vllm:$OUT/$name" $EVAL --out "$OUT/val-eval/$name"
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
      abstain eval --model vllm:bundled-abstain $EVAL --out "$OUT/val-eval/sft-plain"
      abstain eval --model "vllm:$OUT/sft-cue" $EVAL --out "$OUT/val-eval/sft-cue"
      abstain eval --model vllm:bundled $EVAL --out "$OUT/val-eval/base" ;;
    *-*-*) IFS=- read -r data reward ds <<< "$arm"; grpo "$data" "$reward" "$ds" ;;
    *) echo "unknown arm $arm" >&2; exit 2 ;;
  esac
done
