"""Start and stop a real OpenAI-compatible server for tests: ``python -m llama_cpp.server`` serving the
bundled SmolLM2 GGUF on 127.0.0.1, on a free port.

Example (what the session fixture in ``tests/conftest.py`` does)::

    with LlamaServer.start() as server:
        server.base_url  # 'http://127.0.0.1:PORT/v1'
        server.stop()    # the fault test kills it mid-run, then
        server.restart()
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

__all__ = ["LlamaServer", "free_port", "server_available"]

MODEL_ALIAS = "smollm2-135m"


def server_available() -> str | None:
    """None when llama-cpp-python[server] is importable, else why not (for a skip reason)."""
    try:
        import llama_cpp.server  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the install
        return f"llama-cpp-python[server] is not installed ({exc}); run `make install-server`"
    return None


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LlamaServer:
    """One ``llama_cpp.server`` process; ``restart()`` brings it back on the same port."""

    model: Path
    port: int
    n_ctx: int = 2048
    threads: int = 1
    process: subprocess.Popen | None = None
    log_path: Path = field(default_factory=lambda: Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1]))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @classmethod
    def start(cls, port: int | None = None, timeout_s: float = 120.0, **kwargs: object) -> LlamaServer:
        from abstain.backends.bundled import gguf_path

        server = cls(model=gguf_path(), port=port or free_port(), **kwargs)  # type: ignore[arg-type]
        server.restart(timeout_s)
        return server

    def restart(self, timeout_s: float = 120.0) -> None:
        """(Re)start the process and wait until ``/v1/models`` answers."""
        if self.process is not None and self.process.poll() is None:
            return
        env = dict(os.environ, OMP_NUM_THREADS=str(self.threads))
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model), "--model_alias", MODEL_ALIAS,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", str(self.n_ctx), "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
            "--verbose", "False",
        ]  # fmt: skip
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}: {self.log_tail()}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer within {timeout_s:g} s: {self.log_tail()}")

    def stop(self) -> None:
        """Terminate the process (kill it if it does not exit within 10 s) and wait for it."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.log_path.unlink(missing_ok=True)
