"""The OpenAI-compatible client and the ``openai`` generation backend, against a real llama.cpp server.

Retries on 5xx use a tiny local HTTP server that answers 503 before a valid completion: an overloaded
real server cannot be produced on demand. Everything else talks to the real llama.cpp server.
"""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from llama_server import MODEL_ALIAS, free_port

from abstain.backends.base import Backend, GenerationConfig
from abstain.backends.openai import OpenAIBackend, sample_seed
from abstain.llm import JUDGE_ENV, ChatClient, ClientConfig, Endpoint, ResponseCache, cache_key, resolve_endpoint

SECRET = "sk-test-never-written-7f3a"
HI = [{"role": "user", "content": "Say hello."}]


def _client(base_url: str, tmp_path, **config) -> ChatClient:
    config.setdefault("cache_path", tmp_path / "chat.sqlite")
    config.setdefault("max_tokens", 4)
    return ChatClient(Endpoint(base_url, MODEL_ALIAS, api_key=SECRET), ClientConfig(**config))


# -- endpoint resolution (no server) ----------------------------------------------------------------


def test_flags_win_over_environment_and_key_is_hidden():
    env = {"ABSTAIN_JUDGE_BASE_URL": "http://env:1/v1", "ABSTAIN_JUDGE_MODEL": "env-model", "OPENAI_API_KEY": SECRET}
    ep = resolve_endpoint(environ=env)
    assert (ep.base_url, ep.model, ep.api_key) == ("http://env:1/v1", "env-model", SECRET)
    ep = resolve_endpoint(base_url="http://flag:2/v1/", model="flag-model", environ=env)
    assert (ep.base_url, ep.model) == ("http://flag:2/v1", "flag-model")
    assert SECRET not in repr(ep) and SECRET not in json.dumps(ep.public())
    assert resolve_endpoint(environ={**env, "ABSTAIN_JUDGE_API_KEY": "k2"}).api_key == "k2"


def test_missing_url_or_model_names_the_flag_and_variable():
    with pytest.raises(ValueError, match="--judge-base-url.*ABSTAIN_JUDGE_BASE_URL"):
        resolve_endpoint(model="m", environ={})
    with pytest.raises(ValueError, match="--judge-model.*ABSTAIN_JUDGE_MODEL"):
        resolve_endpoint(base_url="http://h:1/v1", environ={}, env=JUDGE_ENV)
    with pytest.raises(ValueError, match="http://"):
        resolve_endpoint(base_url="localhost:8000", model="m", environ={})


def test_cache_key_ignores_where_the_model_is_served():
    params = {"temperature": 0.0, "max_tokens": 4}
    assert cache_key("m", HI, params) == cache_key("m", [dict(HI[0])], dict(params))
    assert cache_key("m", HI, params) != cache_key("other", HI, params)
    assert cache_key("m", HI, params) != cache_key("m", HI, {**params, "max_tokens": 5})


# -- the real server ------------------------------------------------------------------------------


@pytest.mark.slow
def test_chat_caches_on_disk_and_never_stores_the_key(llama_server, tmp_path):
    with _client(llama_server.base_url, tmp_path) as client:
        first = client.chat(HI)
        assert first.ok and isinstance(first.text, str) and not first.cached
        again = client.chat(HI)
        assert again.cached and again.text == first.text
        assert (client.stats.calls, client.stats.requests, client.stats.cache_hits) == (2, 1, 1)
    # a new client (new process, say) finds it on disk: re-scoring costs nothing
    with _client(llama_server.base_url, tmp_path) as client:
        assert client.chat(HI).cached and client.stats.requests == 0
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert SECRET.encode() not in blob and b"127.0.0.1" not in blob


@pytest.mark.slow
def test_chat_many_keeps_order_under_concurrency(llama_server, tmp_path):
    prompts = [[{"role": "user", "content": f"Repeat the number {n}."}] for n in range(6)]
    with _Recorder.serving(llama_server.base_url) as url, _client(url, tmp_path, concurrency=3, cache=False) as client:
        results = client.chat_many(prompts)
    # each result is the text the server answered to *that* prompt, whatever order the requests ran in
    answered = dict(_Recorder.replies)
    assert len(answered) == 6 and [r.text for r in results] == [answered[json.dumps(p)] for p in prompts]
    assert client.stats.requests == 6 and client.stats.failed == 0


def test_connection_errors_are_retried_with_backoff_then_reported(tmp_path):
    port = free_port()  # nobody listens there
    with _client(f"http://127.0.0.1:{port}/v1", tmp_path, retries=2, backoff_s=0.05, trip_after=99) as client:
        start = time.monotonic()
        result = client.chat(HI)
        elapsed = time.monotonic() - start
    assert not result.ok and result.text is None
    assert result.error.startswith("request failed after 3 attempts: ConnectError")
    assert client.stats.requests == 3
    assert elapsed >= 0.05 + 0.1  # two back-off waits: 0.05 s then 0.1 s (plus jitter)


def test_breaker_fails_fast_once_the_server_stays_down(tmp_path):
    port = free_port()
    with _client(f"http://127.0.0.1:{port}/v1", tmp_path, retries=1, backoff_s=0.01, trip_after=2) as client:
        results = [client.chat(HI) for _ in range(6)]
    assert all(not r.ok for r in results)
    assert client.stats.requests == 4  # two requests x two attempts, then the circuit is open
    assert results[-1].error.startswith("not sent: the server failed 2 requests in a row")


class _Flaky(BaseHTTPRequestHandler):
    """Answers 503 to the first ``failures`` requests, then a valid chat completion."""

    failures = 2
    seen: list[str] = []

    def do_POST(self):  # noqa: N802 - http.server API
        length = int(self.headers.get("Content-Length", 0))
        type(self).seen.append(self.headers.get("Authorization", ""))
        json.loads(self.rfile.read(length))
        if len(type(self).seen) <= type(self).failures:
            self.send_response(503)
            self.end_headers()
            self.wfile.write(b"busy")
            return
        body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "Yes"}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_5xx_is_retried_and_the_key_is_sent_as_bearer(tmp_path):
    _Flaky.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        with _client(url, tmp_path, retries=3, backoff_s=0.01, cache=False) as client:
            result = client.chat(HI)
    finally:
        server.shutdown()
        server.server_close()
    assert result.ok and result.text == "Yes"
    assert client.stats.requests == 3 and _Flaky.seen == [f"Bearer {SECRET}"] * 3


@pytest.mark.slow
def test_client_errors_are_not_retried(llama_server, tmp_path):
    with _client(llama_server.base_url.replace("/v1", "/nope"), tmp_path, retries=3, backoff_s=0.01) as client:
        result = client.chat(HI)
    assert not result.ok and "HTTP 404" in result.error and "/v1" in result.error
    assert client.stats.requests == 1


# -- the openai generation backend ----------------------------------------------------------------


@pytest.mark.slow
class _Recorder(BaseHTTPRequestHandler):
    """Forwards each chat request to the real llama.cpp server and records its body."""

    upstream = ""
    bodies: list[dict] = []
    replies: list[tuple[str, str]] = []  # (messages as JSON, the text the server answered)

    def do_POST(self):  # noqa: N802 - http.server API
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.loads(raw)
        type(self).bodies.append(body)
        reply = httpx.post(type(self).upstream + self.path.removeprefix("/v1"), content=raw,
                           headers={"Content-Type": "application/json"}, timeout=120)
        if reply.status_code == 200:
            text = reply.json()["choices"][0]["message"]["content"]
            type(self).replies.append((json.dumps(body["messages"]), text))
        self.send_response(reply.status_code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply.content)))
        self.end_headers()
        self.wfile.write(reply.content)

    def log_message(self, *args):
        pass

    @classmethod
    @contextmanager
    def serving(cls, upstream: str):
        """A recording proxy in front of ``upstream``; yields its ``/v1`` URL."""
        cls.upstream, cls.bodies, cls.replies = upstream, [], []
        proxy = ThreadingHTTPServer(("127.0.0.1", 0), cls)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{proxy.server_address[1]}/v1"
        finally:
            proxy.shutdown()
            proxy.server_close()


def test_openai_backend_generates_n_seeded_samples(llama_server):
    """Every (prompt, sample) request carries its own seed, whatever the batch order.

    What the server guarantees is the request: llama.cpp reuses the KV cache of the previous prompt,
    so the same (prompt, seed) can sample differently after another prompt (this test once asserted
    equal texts across batch orders and failed one run in many). The seeds are what make results
    independent of batching; the texts are checked for shape, not equality.
    """
    prompts = [[{"role": "user", "content": "Name a fruit."}], [{"role": "user", "content": "Name a color."}]]
    config = GenerationConfig(max_new_tokens=6, temperature=1.0, n=2, seed=5)
    with _Recorder.serving(llama_server.base_url) as url:
        backend = OpenAIBackend(MODEL_ALIAS, base_url=url, concurrency=2)
        assert isinstance(backend, Backend)
        try:
            first = backend.generate(prompts, config)
            sent_first = list(_Recorder.bodies)
            again = backend.generate(prompts[::-1], config)  # batch order must not change a prompt's requests
            sent_again = _Recorder.bodies[len(sent_first):]
        finally:
            backend.close()
    assert [len(texts) for texts in first] == [2, 2] and [len(texts) for texts in again] == [2, 2]
    assert all(isinstance(t, str) and t for texts in first + again for t in texts)

    def requests(bodies):
        return sorted((json.dumps(b["messages"]), b["seed"], b["temperature"], b["max_tokens"]) for b in bodies)

    assert len(sent_first) == len(sent_again) == 4 and requests(sent_first) == requests(sent_again)
    expected = sorted((json.dumps(p), sample_seed(p, k, 5), 1.0, 6) for p in prompts for k in range(2))
    assert requests(sent_first) == expected
    assert sample_seed(prompts[0], 0, 5) != sample_seed(prompts[0], 1, 5)


def test_openai_backend_reads_url_and_key_from_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    backend = OpenAIBackend("served-model")
    try:
        assert backend.endpoint.base_url == "http://127.0.0.1:1/v1" and backend.endpoint.api_key == SECRET
        assert SECRET not in repr(backend.endpoint) and backend.name == "served-model"
    finally:
        backend.close()


def test_response_cache_is_shared_between_instances(tmp_path):
    a, b = ResponseCache(tmp_path / "c.sqlite"), ResponseCache(tmp_path / "c.sqlite")
    a.put("k", "m", "text")
    assert b.get("k") == "text" and len(b) == 1
    a.close(), b.close()
