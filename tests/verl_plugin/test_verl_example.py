"""examples/verl/run_grpo_tiar.sh: its overrides compose against veRL 0.9.1's own config and pass its checks
(the composed config is conftest's ``config`` fixture).

No GPU here, so the run itself is not started: the script's exact arguments go through Hydra (unknown keys
fail), veRL's validate_config, the reward-function loader, the dataset class and the advantage dispatcher.
"""

from __future__ import annotations

import pytest

verl = pytest.importorskip("verl")
pytestmark = pytest.mark.verl

import numpy as np  # noqa: E402
import torch  # noqa: E402

def test_the_example_composes_and_validates(config):
    from verl.trainer.main_ppo import validate_config
    from verl.trainer.ppo.utils import need_critic, need_reference_policy

    assert config.algorithm.adv_estimator == "tiar" and config.algorithm.get("tiar_lambda") == 1.0
    assert config.algorithm.use_kl_in_reward is False and config.actor_rollout_ref.rollout.n == 8
    assert config.actor_rollout_ref.model.path == "/models/m" and config.trainer.use_v1
    assert need_critic(config) is False  # GRPO-style: no value model
    validate_config(config=config, use_reference_policy=need_reference_policy(config), use_critic=False)


def test_the_example_loads_our_reward_and_estimator(config):
    from verl import DataProto
    from verl.trainer.ppo.ray_trainer import compute_advantage
    from verl.trainer.ppo.reward import get_custom_reward_fn

    from abstain.integrations.verl.reward import compute_score

    fn = get_custom_reward_fn(config)
    assert fn.args[0] is compute_score and dict(fn.args[1]) == {"preset": "ternary"}
    # three wrong answers and an abstention, scored by the loaded reward function; veRL keeps its extra keys per
    # sample in non_tensor_batch, where the estimator reads the outcomes
    from abstain.integrations.verl.dataset import verl_row
    from abstain.schema import Item

    row = verl_row(Item(id="q", question="What is 2 + 3?", answers=["5"], label="answerable"), "idk", index=0)
    texts = ["\\boxed{4}", "\\boxed{6}", "\\boxed{7}", "\\boxed{I don't know.}"]
    results = [fn(data_source=row["data_source"], solution_str=t, ground_truth=row["reward_model"]["ground_truth"],
                  extra_info=row["extra_info"]) for t in texts]
    assert [r["outcome"] for r in results] == ["wrong", "wrong", "wrong", "abstain"]
    rewards = torch.zeros(4, 2)
    rewards[:, -1] = torch.tensor([r["score"] for r in results])  # p = 0: abstaining is the right call, +1
    data = DataProto.from_dict(tensors={"token_level_rewards": rewards, "response_mask": torch.ones(4, 2)},
                               non_tensors={"uid": np.array(["q"] * 4, dtype=object),
                                            "outcome": np.array([r["outcome"] for r in results], dtype=object)})
    out = compute_advantage(data, adv_estimator=config.algorithm.adv_estimator, config=config.algorithm)
    want = torch.tensor([-0.25, -0.25, -0.25, 0.75]) / (0.5 + 1e-6) + torch.tensor([0.0, 0.0, 0.0, 1.0])
    torch.testing.assert_close(out.batch["advantages"][:, -1], want)  # std of [-1, -1, -1, 0] is 1/2


def test_the_example_dataset_config_reads_the_export(config):
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from abstain.backends.bundled import gguf_path

    path = gguf_path()
    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    dataset = RLHFDataset(list(config.data.train_files) if not isinstance(config.data.train_files, str)
                          else config.data.train_files, tokenizer, config.data)
    assert len(dataset) == 120 and dataset[0]["reward_model"]["style"] == "rule"


def test_the_baseline_and_the_coupled_variant_are_one_variable_away(tmp_path, example_overrides):
    for estimator in ("grpo", "tiar_coupled"):
        args = example_overrides(tmp_path, ESTIMATOR=estimator, LAMBDA="0.5")
        assert f"algorithm.adv_estimator={estimator}" in args and "+algorithm.tiar_lambda=0.5" in args
