"""``bundled-abstain``: the bundled model with the shipped LoRA adapter of the ``cpu-demo`` recipes merged in.

The adapter (``src/abstain/data/models/bundled-abstain/``: ``adapter_model.safetensors``, its config and a
card naming the recipe, data seeds, versions and measured numbers) is a few MB; the first use merges it
into the dense bundled checkpoint with PEFT and caches the result next to it
(``~/.cache/abstain/models/…-abstain-<sha>``), written into a temporary folder and renamed, like the
bundled cache. ``abstain eval --model bundled-abstain`` then runs it like any ``hf`` model.

Example::

    make_backend("bundled-abstain")       # or merged_dir(bundled_model_dir(), adapter_dir) for another adapter
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

from abstain.backends.base import MissingDependencyError
from abstain.backends.bundled import DONE, bundled_model_dir, publish
from abstain.paths import cache_dir

__all__ = ["ADAPTED_NAME", "bundled_abstain_adapter", "bundled_abstain_dir", "merged_dir"]

ADAPTED_NAME = "bundled-abstain"


def bundled_abstain_adapter() -> Path:
    """The shipped adapter folder (its card is ``README.md``)."""
    path = Path(str(resources.files("abstain") / "data" / "models" / ADAPTED_NAME))
    if not (path / "adapter_config.json").exists():
        raise FileNotFoundError(f"{path}: the bundled-abstain adapter is not shipped in this install")
    return path


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for name in ("adapter_config.json", "adapter_model.safetensors"):
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()


def merged_dir(base: Path, adapter: Path, name: str = ADAPTED_NAME) -> Path:
    """A dense checkpoint of ``base`` with the LoRA ``adapter`` merged in, built once and cached."""
    final = cache_dir("models") / f"{base.name}-{name}-{_digest(adapter)[:12]}"
    if (final / DONE).exists():
        return final
    try:
        from peft import PeftModel
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise MissingDependencyError(f"{name} needs PEFT to merge its adapter: pip install 'abstain[hf]' ({exc})") from exc

    def write(tmp: Path) -> dict[str, str]:
        model = AutoModelForCausalLM.from_pretrained(base, dtype="float32")
        model = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
        model.save_pretrained(tmp)
        AutoTokenizer.from_pretrained(base).save_pretrained(tmp)
        return {"base": base.name, "adapter": str(adapter)}

    publish(final, write)
    return final


def bundled_abstain_dir() -> Path:
    """The merged ``bundled-abstain`` checkpoint (built on first use, then cached)."""
    return merged_dir(bundled_model_dir(), bundled_abstain_adapter())
