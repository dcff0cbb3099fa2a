"""make_backend specs and options, install hints, offline errors — no model is loaded here."""

from __future__ import annotations

import importlib.util

import pytest

from abstain.backends import MissingDependencyError, make_backend, template_think_prefix


@pytest.mark.parametrize("spec", ["gpt-4o", "bundled:other", "hf", "llama:x", "", "HF:model"])
def test_unknown_specs_name_the_accepted_forms(spec):
    with pytest.raises(ValueError, match="unknown backend spec .*use bundled, bundled-abstain, hf:<path or hub id>, openai:<model>"):
        make_backend(spec)


@pytest.mark.parametrize("spec", ["hf:", "openai: ", "vllm:"])
def test_spec_without_model(spec):
    with pytest.raises(ValueError, match="names no model"):
        make_backend(spec)


def test_unknown_option_lists_the_known_ones():
    # checked before anything is loaded or built
    with pytest.raises(ValueError, match=r"option base_url is not used by the bundled backend; it takes batch_size"):
        make_backend("bundled", base_url="http://127.0.0.1:8000/v1")
    with pytest.raises(ValueError, match="option temperature is not used by the hf backend"):
        make_backend("hf:/nowhere", temperature=0.5)


def test_bad_option_values():
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        make_backend("hf:/nowhere", batch_size=0)
    with pytest.raises(ValueError, match="dtype must be one of"):
        make_backend("hf:/nowhere", dtype="int3")


def test_missing_local_model_and_offline_hub_id(monkeypatch, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such model directory"):
        make_backend(f"hf:{tmp_path / 'missing'}")
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(ValueError, match="neither a model directory nor a .gguf file"):
        make_backend(f"hf:{tmp_path / 'notes.txt'}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # an empty cache: the id cannot be there
    with pytest.raises(FileNotFoundError, match=r"not in the Hugging Face cache, and HF_HUB_OFFLINE=1"):
        make_backend("hf:abstain-test/no-such-model")


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed: the gate is open")
def test_vllm_is_import_gated():
    from abstain.backends import VLLMBackend

    with pytest.raises(MissingDependencyError, match=r"on a GPU machine pip install 'abstain\[vllm\]'; on a CPU `make install-vllm`"):
        make_backend("vllm:Qwen/Qwen2.5-0.5B-Instruct")
    with pytest.raises(ImportError, match="vllm is not installed"):
        VLLMBackend("Qwen/Qwen2.5-0.5B-Instruct")


def test_openai_spec_builds_the_openai_backend():
    from abstain.backends import OpenAIBackend

    backend = make_backend("openai:served-model", base_url="http://127.0.0.1:1/v1", api_key="sk-test")
    try:
        assert isinstance(backend, OpenAIBackend) and backend.name == "served-model"
    finally:
        backend.close()
    with pytest.raises(ValueError, match="bad option for the openai backend"):
        make_backend("openai:served-model", base_url="http://127.0.0.1:1/v1", batch_size=4)


def test_template_think_prefix():
    assert template_think_prefix("<|Assistant|><think>\n") == "<think>\n"
    assert template_think_prefix("<|im_start|>assistant\n") == ""
    assert template_think_prefix("<think>done</think>\n") == ""


def test_vllm_requests_are_seeded_per_prompt_and_sample():
    from abstain.backends.base import GenerationConfig, sample_seed
    from abstain.backends.vllm import sample_requests

    prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(3)]
    sampled = GenerationConfig(temperature=0.8, n=4, seed=11)
    reqs = sample_requests(prompts, sampled)
    assert len(reqs) == 12 and len({seed for *_, seed in reqs}) == 12
    assert all(seed == sample_seed(prompts[i], k, 11) for i, k, seed in reqs)  # the seed every backend uses
    # a prompt's requests do not depend on its batch or on how many samples were asked for
    alone = sample_requests(prompts[2:], GenerationConfig(temperature=0.8, n=2, seed=11))
    assert [seed for _, _, seed in alone] == [seed for i, k, seed in reqs if i == 2 and k < 2]
    assert [(i, k) for i, k, _ in sample_requests(prompts, GenerationConfig(n=4))] == [(0, 0), (1, 0), (2, 0)]
