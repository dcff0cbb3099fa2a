"""Whether a checkpoint folder was written to its end (a kill mid-save leaves one half-written).

:func:`checkpoint_complete` is what ``--resume`` trusts: the Trainer's ``trainer_state.json`` (written last by the
main process), every ``*.safetensors`` file whole and every RNG state a whole archive, on N processes one per
process, and every sharded (FSDP) weights or optimizer folder with its ``.metadata``.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["checkpoint_complete"]


def checkpoint_complete(folder: Path, world_size: int = 1) -> bool:
    """Whether a trainer finished writing ``folder``: its ``trainer_state.json`` (written last by the main
    process) parses, every ``*.safetensors`` file holds all the bytes its header announces and every RNG state
    is a whole archive — on N processes one per process (``rng_state_<rank>.pth``), which the other processes
    may still be writing when the main one has written the trainer state.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp()) / "checkpoint-2"
        >>> folder.mkdir()
        >>> checkpoint_complete(folder)  # killed before the trainer state was written
        False
        >>> _ = (folder / "trainer_state.json").write_text('{"global_step": 2}')
        >>> checkpoint_complete(folder)
        True
    """
    try:
        json.loads((folder / "trainer_state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if world_size > 1:
        rng = [folder / f"rng_state_{rank}.pth" for rank in range(world_size)]
        if not all(p.exists() for p in rng):
            return False
    else:
        rng = [p for p in (folder / "rng_state.pth",) if p.exists()]
    # FSDP's sharded checkpoints (fsdp_config state_dict_type SHARDED_STATE_DICT): torch.distributed.checkpoint
    # folders, whose .metadata the main process writes once every process's shard is written
    sharded = {p.parent for p in folder.glob("*/*.distcp")}
    return (all(_safetensors_complete(f) for f in folder.glob("*.safetensors")) and all(map(_archive_complete, rng))
            and all((d / ".metadata").exists() for d in sharded))


def _archive_complete(path: Path) -> bool:
    """Whether a ``torch.save`` file (a zip archive) was written to its end (its CRCs check)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            return archive.testzip() is None
    except (OSError, zipfile.BadZipFile):
        return False


def _safetensors_complete(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            size = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(size))
    except (OSError, ValueError):
        return False
    end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
    return path.stat().st_size == 8 + size + end
