"""OpenAI's reasoning models through the ``openai:`` backend: ``max_completion_tokens`` and no temperature, from the
start (``reasoning=true``) or after the server's 400 (``auto``, the default), against the real llama.cpp server
behind a gateway that answers as OpenAI's API answers a reasoning model (tests/openai_gateway.py: the locked
llama.cpp server itself ignores ``max_completion_tokens``)."""

from __future__ import annotations

import logging

import pytest
from llama_server import MODEL_ALIAS
from openai_gateway import Gateway

from abstain.backends.base import GenerationConfig
from abstain.backends.openai import OpenAIBackend
from abstain.backends.registry import make_backend
from abstain.llm import LLMError
from abstain.llm.reasoning import reasoning_mode, reasoning_params, rejects_classic

LONG = [[{"role": "user", "content": "Write a long story about a cat who sails around the world."}],
        [{"role": "user", "content": "List every country in Europe, one a line, with its capital."}]]
CLASSIC = ("max_tokens", "temperature", "top_p")


def test_the_reasoning_shape_and_what_counts_as_a_refusal():
    assert reasoning_params({"temperature": 0.7, "top_p": 0.9, "max_tokens": 8, "seed": 3, "logprobs": True}) == \
        {"seed": 3, "logprobs": True, "max_completion_tokens": 8}
    # OpenAI's answers to a reasoning model, and errors that are not about the request's shape
    assert rejects_classic("Unsupported value: 'temperature' does not support 0 with this model. Only the default "
                           "(1) value is supported.")
    assert rejects_classic('{"error": {"message": "Unsupported parameter: \'top_p\' is not supported with this '
                           'model.", "param": "top_p"}}')
    assert not rejects_classic("'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum "
                               "context length is 2048 tokens")  # vLLM: a budget too large, not a reasoning model
    assert not rejects_classic("Unsupported parameter: 'logit_bias'")
    with pytest.raises(ValueError, match="reasoning='maybe'"):
        reasoning_mode("maybe")
    with pytest.raises(ValueError, match="reasoning="):
        make_backend("openai:m", base_url="http://127.0.0.1:1/v1", reasoning="sometimes")


@pytest.mark.slow
def test_auto_switches_once_on_the_refusal_and_the_budget_bounds_the_reply(llama_server, caplog):
    with Gateway.serving(llama_server.base_url, reasoning_model=True) as gateway:
        backend = OpenAIBackend(MODEL_ALIAS, base_url=gateway.url, concurrency=1)
        try:
            with caplog.at_level(logging.WARNING, logger="abstain.llm"):
                first = backend.generate(LONG[:1], GenerationConfig(max_new_tokens=5))
            again = backend.generate(LONG[1:], GenerationConfig(max_new_tokens=5, temperature=0.7, top_p=0.9))
        finally:
            backend.close()
    assert first[0][0] and again[0][0]
    # one refusal (the first request, in the classic shape), that request once more, then reasoning from the start
    assert len(gateway.refused) == 1 and gateway.bodies[0] is gateway.refused[0] and len(gateway.bodies) == 3
    assert gateway.refused[0]["max_tokens"] == 5 and gateway.refused[0]["temperature"] == 0.0
    for body in gateway.bodies[1:]:
        assert body["max_completion_tokens"] == 5 and not set(CLASSIC) & set(body) and "seed" in body
    assert backend.client.reasoning is True
    assert sum("max_completion_tokens" in r.getMessage() for r in caplog.records) == 1  # said once
    # the server stopped at the budget, on prompts that ask for far more than five tokens
    assert [(u["completion_tokens"], u["finish_reason"]) for u in gateway.usage] == [(5, "length")] * 2


@pytest.mark.slow
def test_reasoning_true_sends_the_reasoning_shape_from_the_start(llama_server):
    with Gateway.serving(llama_server.base_url, reasoning_model=True) as gateway:
        backend = make_backend(f"openai:{MODEL_ALIAS}", base_url=gateway.url, reasoning=True)
        try:
            texts = backend.generate(LONG, GenerationConfig(max_new_tokens=3, temperature=1.0, top_p=0.9, n=2, seed=1))
        finally:
            backend.close()
    assert [len(t) for t in texts] == [2, 2] and all(s for t in texts for s in t)
    assert not gateway.refused and len(gateway.bodies) == 4
    assert all(b["max_completion_tokens"] == 3 and not set(CLASSIC) & set(b) for b in gateway.bodies)
    assert len({b["seed"] for b in gateway.bodies}) == 4  # each sample its own seed, as in the classic shape
    assert all(u["completion_tokens"] == 3 for u in gateway.usage)


@pytest.mark.slow
def test_reasoning_false_leaves_the_refusal_an_error(llama_server):
    with Gateway.serving(llama_server.base_url, reasoning_model=True) as gateway:
        backend = OpenAIBackend(MODEL_ALIAS, base_url=gateway.url, reasoning=False, concurrency=1)
        try:
            with pytest.raises(LLMError, match="HTTP 400.*max_tokens"):
                backend.generate(LONG[:1], GenerationConfig(max_new_tokens=5))
        finally:
            backend.close()
    assert len(gateway.bodies) == 1 and backend.client.reasoning is False


@pytest.mark.slow
def test_auto_leaves_a_server_that_takes_max_tokens_as_it_is(llama_server):
    with Gateway.serving(llama_server.base_url) as gateway:  # a plain OpenAI-compatible server
        backend = OpenAIBackend(MODEL_ALIAS, base_url=gateway.url)
        try:
            backend.generate(LONG, GenerationConfig(max_new_tokens=4))
        finally:
            backend.close()
    assert len(gateway.bodies) == 2 and all(b["max_tokens"] == 4 and b["temperature"] == 0.0 for b in gateway.bodies)
    assert backend.client.reasoning is False and [u["completion_tokens"] for u in gateway.usage] == [4, 4]
