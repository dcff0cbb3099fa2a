"""``bundled-abstain``: the shipped cpu-demo adapter merged into the bundled model, once, then cached."""

from __future__ import annotations

import json

import pytest

from abstain.backends import GenerationConfig, make_backend
from abstain.backends.adapted import bundled_abstain_adapter

pytestmark = pytest.mark.slow


def test_the_shipped_adapter_is_small_and_has_a_card():
    folder = bundled_abstain_adapter()
    size = (folder / "adapter_model.safetensors").stat().st_size
    assert size <= 10 * 1024 * 1024, f"{size / 2**20:.1f} MB"
    card = (folder / "README.md").read_text()
    for needed in ("cpu-demo", "seed", "transformers", "trl", "r1.u_ref", "abstain train "):
        assert needed in card, needed
    config = json.loads((folder / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA"


def test_bundled_abstain_answers_in_the_trained_format(bundled_model_dir):
    prompt = [{"role": "user", "content": "Tom has 3 apples. Ann has 2 more apples than Tom. How many apples does "
                                          "Ann have?\nIf you don't know the answer, reply with \\boxed{I don't know.}"}]
    config = GenerationConfig(max_new_tokens=96)
    trained = make_backend("bundled-abstain", batch_size=1)
    try:
        text = trained.generate([prompt], config)[0][0]
    finally:
        trained.close()
    assert "\\boxed{" in text, text  # the base model rarely boxes; the trained one decides in a box
