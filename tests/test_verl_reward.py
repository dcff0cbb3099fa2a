"""veRL's compute_score equals the reward preset on the same text, with the same keys on every call.

The texts are real: the hand-written fixture responses and the judge development set's SmolLM2 responses.
"""

from __future__ import annotations

import math

import pytest

from abstain import train as rewards
from abstain.integrations.verl.dataset import verl_row
from abstain.integrations.verl.reward import RESULT_KEYS, compute_score
from abstain.evaluation.audit import DEV_SET
from abstain.schema import Item, ResponseRow, read_jsonl
from abstain.train.data.rows import prompt_rows
from abstain.train.rewards.presets import PRESETS


@pytest.fixture(scope="module")
def responses(fixtures_dir) -> list[ResponseRow]:
    return read_jsonl(fixtures_dir / "real_responses.jsonl", ResponseRow) + read_jsonl(DEV_SET, ResponseRow)


@pytest.mark.parametrize("preset", ["ternary", "aca", "rl_ua"])
def test_compute_score_equals_what_the_trl_reward_function_gives(responses, preset):
    items = [Item.model_validate(r.model_dump(exclude={"response", "model", "protocol", "sample"})) for r in responses]
    columns = prompt_rows(items, "idk")
    trl = rewards.make_reward(preset)(prompts=[c["prompt"] for c in columns],
                                      completions=[[{"role": "assistant", "content": r.response}] for r in responses],
                                      **{k: [c[k] for c in columns] for k in columns[0] if k != "prompt"})
    for i, (item, response, value) in enumerate(zip(items, responses, trl, strict=True)):
        row = verl_row(item, "idk", index=i)
        got = compute_score(row["data_source"], response.response, row["reward_model"]["ground_truth"],
                            row["extra_info"], preset=preset)
        assert got["score"] == (0.0 if value is None else value), (i, response.response[:80])


@pytest.mark.parametrize("preset", ["ternary", "ternary_ook"])
def test_compute_score_equals_the_preset(responses, preset):
    for i, response in enumerate(responses):
        item = Item.model_validate(response.model_dump(exclude={"response", "model", "protocol", "sample"}))
        row = verl_row(item, response.protocol or "idk", index=i)
        got = compute_score(row["data_source"], response.response, row["reward_model"]["ground_truth"],
                            {**row["extra_info"], "num_turns": 2}, preset=preset,
                            reward_router_address=None)  # a key veRL adds: ignored
        want = rewards.score_one(preset, item, response.response)
        assert tuple(got) == RESULT_KEYS  # the same keys, in the same order, every call
        assert got["score"] == (0.0 if want.score is None else want.score)
        assert got["outcome"] == ("unscored" if want.score is None else want.outcome)
        assert got["pred"] == str(want.pred) and got["format_ok"] == float(want.format_ok)
        assert sum(got[k] for k in ("correct", "wrong", "abstain", "unscored")) == 1.0
        assert got["acc"] == got["correct"] and math.isfinite(got["score"])


@pytest.mark.parametrize("advantage", ["tiar", "coupled"])
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_gives_the_trl_paths_advantages_on_verl(responses, preset, advantage):
    """compute_score -> the veRL estimator (outcomes from compute_score's column) against the TRL trainer's path (the
    preset's values and the scorer's outcomes -> advantages_grouped) on the same responses, grouped by fours."""
    import numpy as np
    import torch

    from abstain.integrations.verl.estimators import ESTIMATORS
    from abstain.train.rewards.advantages import AdvantageConfig, advantages_grouped

    chosen = responses[:len(responses) // 4 * 4]
    results, values, outcomes = [], [], []
    for i, response in enumerate(chosen):
        item = Item.model_validate(response.model_dump(exclude={"response", "model", "protocol", "sample"}))
        row = verl_row(item, "idk", index=i)
        results.append(compute_score(row["data_source"], response.response, row["reward_model"]["ground_truth"],
                                     row["extra_info"], preset=preset))
        want = rewards.score_one(preset, item, response.response)  # what the TRL reward function and trainer read
        values.append(math.nan if want.score is None else want.score)
        outcomes.append("unscored" if want.score is None else want.outcome)
    assert [r["outcome"] for r in results] == outcomes
    scores = torch.tensor([r["score"] for r in results])
    token_rewards = torch.zeros(len(scores), 3)
    token_rewards[:, -1] = scores  # veRL puts the score on the last token
    uids = np.asarray([f"q{i // 4}" for i in range(len(scores))], dtype=object)
    name = "tiar" if advantage == "tiar" else "tiar_coupled"
    got, _ = ESTIMATORS[name](token_rewards, torch.ones(len(scores), 3), uids, config={},
                              non_tensor_batch={"outcome": np.asarray([r["outcome"] for r in results], dtype=object)})
    trl = advantages_grouped(torch.tensor(values).view(-1, 4), np.asarray(outcomes).reshape(-1, 4),
                             AdvantageConfig(advantage=advantage)).reshape(-1)
    # the same advantages up to the normalizations' epsilon (TRL 1e-4, veRL 1e-6)
    assert got[:, -1].tolist() == pytest.approx(trl.tolist(), rel=1e-3, abs=1e-3)
    assert any(o == "abstain" for o in outcomes) and len(set(outcomes)) > 1
