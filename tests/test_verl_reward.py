"""veRL's compute_score equals the reward preset on the same text, with the same keys on every call.

The texts are real: the hand-written fixture responses and the judge development set's SmolLM2 responses.
"""

from __future__ import annotations

import math

import pytest

from abstain import train as rewards
from abstain.audit import DEV_SET
from abstain.integrations.verl.dataset import verl_row
from abstain.integrations.verl.reward import RESULT_KEYS, compute_score
from abstain.schema import Item, ResponseRow, read_jsonl
from abstain.train.data.rows import prompt_rows


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
