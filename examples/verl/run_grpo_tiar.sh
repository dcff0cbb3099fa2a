#!/usr/bin/env bash
# GRPO with TIAR on one node with veRL 0.9.1: Qwen2.5-1.5B-Instruct, ternary reward, group size 8.
# Not run here (no GPU in this project's machines); its overrides are checked against veRL's own config
# by tests/verl_plugin/test_verl_example.py. See README.md beside this file.
#
#   MODEL   a 0.5-3B instruct model (HF id or local path)      default Qwen/Qwen2.5-1.5B-Instruct
#   DATA    folder with train.parquet and val.parquet           default ./data (prepare_data.sh writes it)
#   GPUS    GPUs on this node                                   default 8
#   LAMBDA  TIAR's lambda (the paper: 1.0)                      default 1.0
#   ESTIMATOR  tiar | tiar_coupled | grpo (the ternary baseline) default tiar
# Extra Hydra overrides go after the script's arguments, e.g.  ./run_grpo_tiar.sh trainer.total_epochs=1
set -euo pipefail

MODEL=${MODEL:-Qwen/Qwen2.5-1.5B-Instruct}
DATA=${DATA:-./data}
GPUS=${GPUS:-8}
LAMBDA=${LAMBDA:-1.0}
ESTIMATOR=${ESTIMATOR:-tiar}

${LAUNCH:-python3 -m verl.trainer.main_ppo} \
    algorithm.adv_estimator="$ESTIMATOR" \
    +algorithm.tiar_lambda="$LAMBDA" \
    algorithm.norm_adv_by_std_in_grpo=True \
    algorithm.use_kl_in_reward=False \
    data.train_files="$DATA/train.parquet" \
    data.val_files="$DATA/val.parquet" \
    data.train_batch_size=64 \
    data.max_prompt_length=1024 \
    data.max_response_length=2048 \
    data.filter_overlong_prompts=True \
    data.truncation=error \
    reward.custom_reward_function.path=pkg://abstain.integrations.verl.reward \
    reward.custom_reward_function.name=compute_score \
    +reward.custom_reward_function.reward_kwargs.preset=ternary \
    actor_rollout_ref.model.path="$MODEL" \
    actor_rollout_ref.model.use_remove_padding=True \
    actor_rollout_ref.model.enable_gradient_checkpointing=True \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=32 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \
    actor_rollout_ref.actor.use_kl_loss=True \
    actor_rollout_ref.actor.kl_loss_coef=0.001 \
    actor_rollout_ref.actor.kl_loss_type=low_var_kl \
    actor_rollout_ref.actor.entropy_coeff=0 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.n=8 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16 \
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=16 \
    trainer.n_gpus_per_node="$GPUS" \
    trainer.nnodes=1 \
    trainer.total_epochs=5 \
    trainer.save_freq=20 \
    trainer.test_freq=10 \
    trainer.val_before_train=True \
    trainer.logger='["console"]' \
    trainer.project_name=abstain \
    trainer.experiment_name="grpo-$ESTIMATOR-lambda$LAMBDA" \
    "$@"
