"""The hf backend on the real bundled model: order, batching, seeds, n samples, <think>, tokens.

All generation here is tiny (a handful of prompts, <= 8 new tokens) and shares one session backend.
"""

from __future__ import annotations

import dataclasses

import pytest

from abstain.backends import Backend, GenerationConfig, sample_seed
from abstain.parsing import parse_response

pytestmark = pytest.mark.slow

QUESTIONS = [
    "What is 2 + 3?",
    "Janet has 16 eggs and eats 3 of them for breakfast every morning. How many eggs are left at the end?",
    "Hi",
    "Name a primary color.",
]
PROMPTS = [[{"role": "user", "content": q}] for q in QUESTIONS]
GREEDY = GenerationConfig(max_new_tokens=8)
SAMPLED = GenerationConfig(max_new_tokens=6, temperature=1.0, top_p=0.95, n=2, seed=7)


def test_bundled_backend_is_a_backend(bundled_backend):
    assert isinstance(bundled_backend, Backend)
    assert bundled_backend.name == "bundled"
    # the shipped prompts differ in length, so length sorting really reorders them
    lengths = [bundled_backend.count_tokens(bundled_backend.render(p)) for p in PROMPTS]
    assert sorted(lengths, reverse=True) != lengths


def test_greedy_batched_equals_one_by_one_and_keeps_order(bundled_backend):
    before = bundled_backend.stats.new_tokens
    batched = bundled_backend.generate(PROMPTS, GREEDY)
    assert [len(t) for t in batched] == [1] * len(PROMPTS)
    assert all(t[0].strip() for t in batched)
    assert len(set(t[0] for t in batched)) == len(PROMPTS)  # each prompt got its own answer back
    ids = [bundled_backend.tokenizer(bundled_backend.render(p))["input_ids"] for p in PROMPTS]
    assert bundled_backend._shared_prefix(ids) >= 16  # the batch went through the shared-prefix path
    one_by_one = [bundled_backend.generate([p], GREEDY)[0] for p in PROMPTS]
    assert batched == one_by_one
    assert bundled_backend.generate(PROMPTS[::-1], GREEDY) == batched[::-1]
    generated = bundled_backend.stats.new_tokens - before
    assert 0 < generated <= 3 * len(PROMPTS) * GREEDY.max_new_tokens


def test_greedy_n_copies_the_single_decode(bundled_backend):
    texts = bundled_backend.generate(PROMPTS[:2], GenerationConfig(max_new_tokens=8, n=3))
    assert [len(t) for t in texts] == [3, 3]
    assert all(len(set(t)) == 1 for t in texts)


def test_seeded_sampling_is_deterministic_and_independent_of_batch(bundled_backend):
    first = bundled_backend.generate(PROMPTS, SAMPLED)
    assert [len(t) for t in first] == [SAMPLED.n] * len(PROMPTS)
    # other batch compositions: reversed, one by one, mixed with a prompt that is not in `first`
    assert bundled_backend.generate(PROMPTS[::-1], SAMPLED) == first[::-1]
    assert [bundled_backend.generate([p], SAMPLED)[0] for p in PROMPTS] == first
    mixed = bundled_backend.generate([[{"role": "user", "content": "Count to ten."}], PROMPTS[1], PROMPTS[3]], SAMPLED)
    assert mixed[1:] == [first[1], first[3]]
    # the n samples of a prompt differ from each other, and another seed draws other texts
    assert any(len(set(t)) == SAMPLED.n for t in first)
    other = bundled_backend.generate(PROMPTS, dataclasses.replace(SAMPLED, seed=8))
    assert other != first


def test_sample_seed_depends_on_prompt_sample_and_seed():
    seeds = {sample_seed(p, k, s) for p in PROMPTS for k in range(3) for s in range(2)}
    assert len(seeds) == len(PROMPTS) * 3 * 2
    assert all(0 <= s < 2**31 for s in seeds)


def test_token_count_stops_at_eos_and_budget(bundled_backend):
    texts = bundled_backend.generate(PROMPTS[:1], GenerationConfig(max_new_tokens=1))
    before = bundled_backend.stats.new_tokens
    bundled_backend.generate(PROMPTS[:1], GenerationConfig(max_new_tokens=1))
    assert bundled_backend.stats.new_tokens - before == 1
    assert bundled_backend.count_tokens(texts[0][0]) == 1


def test_think_tags_survive_decoding_and_template(bundled_backend, bundled_model_dir):
    """A tokenizer that marks <think> special must not lose it; a template-opened <think> is stored."""
    import torch
    from transformers import AutoTokenizer

    from abstain.backends import HFBackend, HFOptions

    # decoding: a tokenizer whose <think> tags are special tokens
    tokenizer = AutoTokenizer.from_pretrained(bundled_model_dir)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<think>", "</think>"]})
    decoder = HFBackend.from_model(bundled_backend.model, tokenizer, "bundled-think")
    raw = "<think>2 and 3 make 5</think> \\boxed{5}"
    ids = tokenizer(raw, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id, tokenizer.pad_token_id]
    assert tokenizer.decode(ids, skip_special_tokens=True) != raw  # what a plain decode would store
    text, count = decoder.decode(torch.tensor(ids))
    assert text == raw and count == len(ids) - 1

    # a chat template that opens <think> in the prompt (DeepSeek-R1 style): the opening is stored
    think_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}"
    )
    backend = HFBackend.from_model(
        bundled_backend.model, bundled_backend.tokenizer, "bundled-think", HFOptions(chat_template=think_template)
    )
    generated = backend.generate(PROMPTS[:1], GenerationConfig(max_new_tokens=4))[0][0]
    assert generated.startswith("<think>\n")
    assert parse_response(generated + "</think> \\boxed{5}").reasoning is not None


def test_a_device_map_spreads_the_model_and_gives_the_same_text(bundled_backend, bundled_model_dir):
    # device_map (a model larger than one GPU): transformers places the layers over the devices; on this CPU every
    # layer lands on the CPU, and the inputs and the seeded sampler follow the model wherever it is
    from abstain.backends.hf import HFBackend, HFOptions

    mapped = HFBackend(bundled_model_dir, HFOptions(device_map="auto", batch_size=4), name="bundled")
    assert {p.device.type for p in mapped.model.parameters()} == {"cpu"}
    prompts = [[{"role": "user", "content": q}] for q in ("What is 2 + 3?", "Name a prime number.")]
    greedy, sampled = GenerationConfig(max_new_tokens=12), GenerationConfig(max_new_tokens=12, temperature=0.8, seed=1)
    assert mapped.generate(prompts, greedy) == bundled_backend.generate(prompts, greedy)
    assert mapped.generate(prompts, sampled) == bundled_backend.generate(prompts, sampled)
    with pytest.raises(ValueError, match=r"give device \(cpu\) or device_map \(auto\), not both"):
        HFOptions(device="cpu", device_map="auto")
