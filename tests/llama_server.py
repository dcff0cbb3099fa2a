"""Start and stop a real OpenAI-compatible server for tests: ``python -m llama_cpp.server`` serving the
bundled SmolLM2 GGUF on 127.0.0.1, on a free port.

Example (what the session fixture in ``tests/conftest.py`` does)::

    with LlamaServer.start() as server:   # ready = /v1/models answers *and* one chat request did
        server.base_url  # 'http://127.0.0.1:PORT/v1'
        server.death()   # None while it runs, else 'llama_cpp.server (pid 123) died: killed by SIGSEGV ...'
        server.stop()    # the fault test kills it mid-run, then
        server.restart()

Run as a script (``make install-server`` does, after building llama.cpp) it starts the server, asks one chat
request, and prints the reply and the CPU features llama.cpp was built with; a server that dies fails it::

    python tests/llama_server.py
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

__all__ = ["LlamaServer", "ServerDied", "describe_exit", "free_port", "server_available"]

MODEL_ALIAS = "smollm2-135m"
# Tests of the fixture itself point the server at a model that cannot load.
MODEL_ENV = "ABSTAIN_TEST_LLAMA_MODEL"


class ServerDied(RuntimeError):
    """The server process exited: the message names its exit code or signal and ends with its log's last lines."""


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


def describe_exit(returncode: int) -> str:
    """How a process ended, in words.

    >>> describe_exit(-11)
    'killed by SIGSEGV (signal 11)'
    >>> describe_exit(1)
    'exit code 1'
    """
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "an unknown signal"
        return f"killed by {name} (signal {-returncode})"
    return f"exit code {returncode}"


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

        model = Path(os.environ[MODEL_ENV]) if os.environ.get(MODEL_ENV) else gguf_path()
        server = cls(model=model, port=port or free_port(), **kwargs)  # type: ignore[arg-type]
        server.restart(timeout_s)
        return server

    def restart(self, timeout_s: float = 120.0) -> None:
        """(Re)start the process and wait until ``/v1/models`` answers and one chat request is served.

        The chat request is part of being ready: a llama.cpp built for the wrong CPU loads the model and lists
        it, then dies on its first matrix product (a general protection fault, a SIGILL). Raises
        :class:`ServerDied` when the process exits, ``RuntimeError`` when it never answers.
        """
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
            self._raise_if_dead("while starting")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        else:
            self.stop()
            raise RuntimeError(f"llama_cpp.server did not answer within {timeout_s:g} s\n{self.log_tail()}")
        try:
            self.chat("Hi", max_tokens=1, timeout_s=max(deadline - time.monotonic(), 10.0))
        except httpx.TransportError as exc:
            self._wait_exit(5.0)
            self._raise_if_dead("on its first chat request")
            self.stop()
            raise RuntimeError(f"llama_cpp.server did not answer a chat request ({exc!r})\n{self.log_tail()}") from None

    def chat(self, content: str, max_tokens: int = 8, timeout_s: float = 60.0) -> str:
        """One greedy chat completion; the reply's text."""
        body = {"model": MODEL_ALIAS, "messages": [{"role": "user", "content": content}],
                "max_tokens": max_tokens, "temperature": 0.0}  # fmt: skip
        reply = httpx.post(f"{self.base_url}/chat/completions", json=body, timeout=timeout_s)
        reply.raise_for_status()
        return str(reply.json()["choices"][0]["message"]["content"])

    def death(self) -> str | None:
        """None while the process runs (or was never started); else how it ended and its log's last lines."""
        if self.process is None or self.process.poll() is None:
            return None
        return (
            f"llama_cpp.server (pid {self.process.pid}, port {self.port}) died: "
            f"{describe_exit(self.process.returncode)}\n--- last lines of {self.log_path} ---\n{self.log_tail()}"
        )

    def _wait_exit(self, timeout_s: float) -> None:
        if self.process is not None:
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                pass

    def _raise_if_dead(self, when: str) -> None:
        death = self.death()
        if death is not None:
            raise ServerDied(death.replace(" died: ", f" died {when}: ", 1))

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

    def log_tail(self, lines: int = 20) -> str:
        """The log's last ``lines`` lines (stdout and stderr together)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.rstrip().splitlines()[-lines:]) or "(the log is empty)"

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.log_path.unlink(missing_ok=True)


def _smoke() -> int:
    """Start the server, ask one chat request, print the reply and llama.cpp's CPU features; 1 if it died."""
    reason = server_available()
    if reason:
        print(reason, file=sys.stderr)
        return 1
    import llama_cpp

    features = llama_cpp.llama_print_system_info().decode(errors="replace").strip()
    try:
        with LlamaServer.start() as server:
            reply = server.chat("What is 2 + 3? Answer with a number.", max_tokens=16)
    except RuntimeError as exc:  # ServerDied included
        print(f"llama.cpp server check FAILED\n{exc}\nllama.cpp was built with: {features}", file=sys.stderr)
        return 1
    print(f"llama.cpp server check: ok (llama-cpp-python {llama_cpp.__version__}); reply {reply!r}")
    print(f"llama.cpp was built with: {features}")
    return 0


if __name__ == "__main__":
    sys.exit(_smoke())
