"""A small HTTP gateway in front of the real llama.cpp test server that records every chat request, and that can
answer as OpenAI's API answers a reasoning model (o1, o3, o4-mini, gpt-5): HTTP 400 for ``max_tokens``,
``temperature`` or ``top_p``, with OpenAI's own error bodies, and ``max_completion_tokens`` honoured.

The locked llama.cpp server (llama-cpp-python 0.3.36) reads ``max_tokens`` only and ignores
``max_completion_tokens``, and OpenAI cannot be reached from a test: the gateway stands in for the API's request
checks, the generation is the real server's (``max_completion_tokens`` is handed to it as ``max_tokens``).

Example::

    with Gateway.serving(llama_server.base_url, reasoning_model=True) as gateway:
        OpenAIBackend(MODEL_ALIAS, base_url=gateway.url).generate(prompts, GenerationConfig(max_new_tokens=5))
        gateway.bodies     # every request body, in arrival order
        gateway.refused    # the ones answered 400
        gateway.usage      # the server's `usage` and `finish_reason` of each answered one
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

__all__ = ["Gateway", "openai_refusal"]


def openai_refusal(body: dict) -> dict | None:
    """OpenAI's 400 error for a classic request to a reasoning model, or None when ``body`` is in its shape."""
    if "max_tokens" in body:
        return {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                                     "'max_completion_tokens' instead.", "type": "invalid_request_error",
                          "param": "max_tokens", "code": "unsupported_parameter"}}
    if "temperature" in body and body["temperature"] != 1:
        return {"error": {"message": f"Unsupported value: 'temperature' does not support {body['temperature']} with "
                                     "this model. Only the default (1) value is supported.",
                          "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}
    if "top_p" in body:
        return {"error": {"message": "Unsupported parameter: 'top_p' is not supported with this model.",
                          "type": "invalid_request_error", "param": "top_p", "code": "unsupported_parameter"}}
    return None


@dataclass
class Gateway:
    """The gateway's upstream (a llama.cpp ``/v1`` URL), its mode and what it saw."""

    upstream: str
    reasoning_model: bool = False
    url: str = ""
    bodies: list[dict] = field(default_factory=list)
    refused: list[dict] = field(default_factory=list)
    usage: list[dict] = field(default_factory=list)
    authorization: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict, authorization: str) -> tuple[int, bytes]:
        with self.lock:
            self.bodies.append(body)
            self.authorization.append(authorization)
        if self.reasoning_model:
            refusal = openai_refusal(body)
            if refusal is not None:
                with self.lock:
                    self.refused.append(body)
                return 400, json.dumps(refusal).encode()
            sent = body
            body = {k: v for k, v in sent.items() if k != "max_completion_tokens"}
            if "max_completion_tokens" in sent:  # what llama.cpp's server reads
                body["max_tokens"] = sent["max_completion_tokens"]
        reply = httpx.post(f"{self.upstream}/chat/completions", json=body, timeout=120)
        if reply.status_code == 200:
            data = reply.json()
            with self.lock:
                self.usage.append({**data.get("usage", {}), "finish_reason": data["choices"][0].get("finish_reason")})
        return reply.status_code, reply.content

    @classmethod
    @contextmanager
    def serving(cls, upstream: str, reasoning_model: bool = False) -> Iterator[Gateway]:
        """The gateway on a free loopback port for the ``with`` block; ``.url`` is its ``/v1`` URL."""
        gateway = cls(upstream.rstrip("/"), reasoning_model)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server API
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, content = gateway.answer(json.loads(raw), self.headers.get("Authorization", ""))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        gateway.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield gateway
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
