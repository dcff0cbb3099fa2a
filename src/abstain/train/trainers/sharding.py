"""How a run's weights are spread over its processes: replicated (DDP, ZeRO-1/2), FSDP2 or DeepSpeed ZeRO-3, as a
recipe's ``trl`` section (TRL's own ``fsdp``, ``fsdp_config``, ``deepspeed`` fields) or the launcher's environment
(``accelerate launch --config_file`` with FSDP or DeepSpeed) asks for it.

:func:`sharding_of` reads both (both at once is an error); :class:`~abstain.train.trainers.policy.Policy` decides
from it how the model loads and how ``final/`` is gathered.

Example:
    >>> sharding_of({"fsdp": "full_shard"}, env={}).record()
    {'kind': 'fsdp', 'zero_stage': None, 'source': 'recipe field trl.fsdp'}
    >>> sharding_of({}, env={"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "2"}).record()
    {'kind': 'deepspeed', 'zero_stage': 2, 'source': 'the launcher (ACCELERATE_USE_DEEPSPEED)'}
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abstain.schema import DataError

__all__ = ["Sharding", "read_fsdp_config", "sharding_of"]


@dataclass(frozen=True)
class Sharding:
    """How the weights are spread over the processes: ``none`` (every process holds the whole model: DDP, ZeRO-1/2),
    ``fsdp`` (FSDP2) or ``deepspeed`` (with its ZeRO stage); ``source`` says who asked for it."""

    kind: str = "none"
    zero_stage: int | None = None
    source: str = ""
    #: ZeRO-3: whether the config gathers the whole weights when the model is saved (final/ needs them)
    gathers_on_save: bool = False
    #: the launcher's FSDP checkpoints activations itself (FSDP_ACTIVATION_CHECKPOINTING from an accelerate config)
    launcher_checkpointing: bool = False

    @property
    def shards_weights(self) -> bool:
        """Whether no process holds the whole model (saving it needs every process)."""
        return self.kind == "fsdp" or (self.kind == "deepspeed" and self.zero_stage == 3)

    @property
    def from_recipe(self) -> bool:
        return self.source.startswith("recipe")

    def record(self) -> dict[str, Any]:
        return {"kind": self.kind, "zero_stage": self.zero_stage, "source": self.source}


def _deepspeed_config(config: object, where: str) -> dict[str, Any]:
    """A DeepSpeed config (a dict, or the path of a JSON file) as a dict."""
    if isinstance(config, str) and config.strip():
        try:
            config = json.loads(Path(config).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DataError(f"{where}: cannot read {config} ({exc})") from None
    return config if isinstance(config, dict) else {}


def _zero_stage(config: dict[str, Any]) -> int | None:
    stage = (config.get("zero_optimization") or {}).get("stage")
    return int(stage) if stage is not None and str(stage).isdigit() else None


def _gathers_on_save(config: dict[str, Any]) -> bool:
    """Whether a ZeRO-3 config gathers the whole weights when the model is saved (what final/ needs)."""
    zero = config.get("zero_optimization") or {}
    return bool(zero.get("stage3_gather_16bit_weights_on_model_save", zero.get("gather_16bit_weights_on_model_save")))


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes")


def sharding_of(trl: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Sharding:
    """The sharding a recipe's ``trl`` section and the launcher's environment ask for (both is an error)."""
    env = os.environ if env is None else env
    found: list[Sharding] = []
    if trl.get("fsdp"):
        found.append(Sharding("fsdp", None, "recipe field trl.fsdp"))
    if trl.get("deepspeed"):
        config = _deepspeed_config(trl["deepspeed"], "recipe field trl.deepspeed")
        found.append(Sharding("deepspeed", _zero_stage(config), "recipe field trl.deepspeed",
                              gathers_on_save=_gathers_on_save(config)))
    if _true(env.get("ACCELERATE_USE_FSDP")) and not trl.get("fsdp"):
        version = env.get("FSDP_VERSION", "1").strip() or "1"  # accelerate's default: FSDP1
        if version != "2":
            raise DataError(f"the launcher's FSDP is FSDP{version} (FSDP_VERSION={version}; accelerate's default when "
                            "its config has no fsdp_version): abstain trains with FSDP2, so set fsdp_config: "
                            "{fsdp_version: 2} in the accelerate config (examples/sharded/fsdp2.yaml)")
        found.append(Sharding("fsdp", None, "the launcher (ACCELERATE_USE_FSDP)",
                              launcher_checkpointing=_true(env.get("FSDP_ACTIVATION_CHECKPOINTING"))))
    if _true(env.get("ACCELERATE_USE_DEEPSPEED")) and not trl.get("deepspeed"):
        stage = env.get("ACCELERATE_DEEPSPEED_ZERO_STAGE", "").strip()
        config = _deepspeed_config(env.get("ACCELERATE_DEEPSPEED_CONFIG_FILE", "").strip(),
                                   "ACCELERATE_DEEPSPEED_CONFIG_FILE")
        found.append(Sharding("deepspeed", int(stage) if stage.isdigit() else _zero_stage(config),
                              "the launcher (ACCELERATE_USE_DEEPSPEED)",
                              gathers_on_save=_gathers_on_save(config)
                              or _true(env.get("ACCELERATE_DEEPSPEED_ZERO3_SAVE_16BIT_MODEL"))))
    if len({s.kind for s in found}) > 1:
        raise DataError(f"two kinds of sharding asked for: {' and '.join(f'{s.kind} ({s.source})' for s in found)}; "
                        "choose one")
    return found[0] if found else Sharding()


def read_fsdp_config(config: object) -> dict[str, Any]:
    """A ``trl.fsdp_config`` as a dict (TRL takes a dict or a JSON file's path), ``fsdp_`` prefixes removed."""
    if isinstance(config, str) and config.strip():
        try:
            config = json.loads(Path(config).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DataError(f"recipe field trl.fsdp_config: cannot read {config} ({exc})") from None
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise DataError("recipe field trl.fsdp_config: a mapping of FSDP settings, or a JSON file's path")
    return {k.removeprefix("fsdp_"): v for k, v in config.items()}
