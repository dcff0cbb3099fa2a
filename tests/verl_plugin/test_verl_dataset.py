"""What `abstain export verl` writes is what veRL's RLHFDataset reads; veRL loads our compute_score."""

from __future__ import annotations

import pytest

verl = pytest.importorskip("verl")
pytestmark = pytest.mark.verl

from omegaconf import OmegaConf  # noqa: E402
from typer.testing import CliRunner  # noqa: E402
from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn  # noqa: E402

from abstain.cli import app  # noqa: E402
from abstain.data.suites import load_custom  # noqa: E402
from abstain.integrations.verl.dataset import item_from_verl, mix_items  # noqa: E402
from abstain.protocols import get_protocol  # noqa: E402
from abstain.schema import write_jsonl  # noqa: E402
from abstain.train.data.mix import MixConfig, training_items  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer():
    """The bundled SmolLM2's tokenizer (with its chat template), read from the shipped GGUF."""
    from transformers import AutoTokenizer

    from abstain.backends.bundled import gguf_path

    path = gguf_path()
    return AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)


@pytest.mark.parametrize("suffix,protocol", [(".parquet", "clarify"), (".jsonl", "attribution")])
def test_rlhf_dataset_reads_the_export(tmp_path, tokenizer, suffix, protocol):
    out = tmp_path / f"train{suffix}"
    data = tmp_path / "items.jsonl"  # training rows: certified synthesis (quick holds held-out questions)
    write_jsonl(data, training_items(MixConfig(n=120, seed=2)))
    r = CliRunner().invoke(app, ["export", "verl", "--data", str(data), "--protocol", protocol,
                                 "--unanswerable-ratio", "0.3", "--out", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    config = OmegaConf.create({"max_prompt_length": 1024, "filter_overlong_prompts": True,
                               "filter_overlong_prompts_workers": 1, "cache_dir": str(tmp_path / "cache")})
    dataset = RLHFDataset([str(out)], tokenizer, config)  # applies the chat template to every prompt
    items = mix_items(load_custom(data).items, 0.3, seed=0)
    assert len(dataset) == len(items) == 108  # none dropped as too long or unreadable
    for i, item in enumerate(items):
        row = dataset[i]
        assert row["raw_prompt"] == get_protocol(protocol).messages(item)
        assert row["data_source"].startswith("abstain/") and row["index"] == i
        assert list(row["reward_model"]["ground_truth"]) == item.answers
        assert item_from_verl(row["extra_info"]) == item  # what compute_score will score against
    batch = collate_fn([dataset[0], dataset[1]])
    assert len(batch["raw_prompt"]) == 2 and batch["extra_info"][1]["id"] == items[1].id


def test_verl_loads_compute_score_with_the_reward_kwargs():
    from verl.trainer.ppo.reward import get_custom_reward_fn

    from abstain.integrations.verl.reward import compute_score

    config = OmegaConf.create({"reward": {"custom_reward_function": {
        "path": "pkg://abstain.integrations.verl.reward", "name": "compute_score",
        "reward_kwargs": {"preset": "ternary", "unscored_score": 0.0}}}})
    fn = get_custom_reward_fn(config)
    assert fn.args[0] is compute_score and fn.args[1] == {"preset": "ternary", "unscored_score": 0.0}
