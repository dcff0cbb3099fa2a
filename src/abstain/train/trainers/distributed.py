"""Training on N processes: who writes the run folder, how a recipe's global batch is split, and waiting.

Launchers (``torchrun``, ``accelerate launch``, DeepSpeed's ``deepspeed``) start one process per device and
tell each its place through the environment (``WORLD_SIZE``, ``RANK``, ``LOCAL_RANK``). abstain reads that
place once (:class:`World`); every process trains, but only the main one (rank 0) writes the run folder's
records and prints; the others are quiet unless something fails (:func:`quiet_replica`). Work only the main
process does runs inside :func:`main_first`: the others wait for it and fail with it if it fails, so no
process is left waiting on a barrier the main one never reaches.

A recipe's ``batch_size`` is the global batch — what one optimizer step sees on any number of processes —
and :func:`split_batch` cuts it into rows per process and per forward pass (``micro_batch_size``) times
gradient accumulation, or says which batch sizes would divide.

Example:
    >>> split = split_batch(16, world_size=2)
    >>> split.per_device, split.accumulation, split.record()["batch_size"]
    (8, 1, 16)
    >>> split_batch(16, world_size=2, micro_batch_size=2).accumulation
    4
    >>> split_batch(10, world_size=4)
    Traceback (most recent call last):
    ...
    abstain.schema.DataError: recipe field 'batch_size': 10 does not divide over 4 process(es) (the global batch must be a multiple of 4); nearest valid: 8 or 12
"""

from __future__ import annotations

import logging
import math
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, TypeVar

from abstain.schema import DataError

if TYPE_CHECKING:  # pragma: no cover
    from abstain.train.recipe import Recipe

__all__ = ["BatchSplit", "MainProcessFailed", "World", "agree_on", "barrier", "init_processes", "is_main_process",
           "main_first", "quiet_replica", "recipe_split", "split_batch", "warn_single_process_launch"]

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class World:
    """This process's place among the launched ones (a plain ``python`` run: one process, rank 0)."""

    size: int = 1
    rank: int = 0
    local_rank: int = 0

    @classmethod
    def from_env(cls) -> World:
        """What the launcher said (torchrun, accelerate launch and deepspeed all set these variables)."""

        def number(*names: str, default: int) -> int:
            for name in names:
                value = os.environ.get(name, "").strip()
                if value:
                    try:
                        return int(value)
                    except ValueError:
                        raise DataError(f"environment variable {name}={value!r}: expected an integer") from None
            return default

        size = number("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", default=1)
        rank = number("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", default=0)
        local = number("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", default=0)
        if size < 1 or not 0 <= rank < size:
            raise DataError(f"launcher environment: RANK={rank} with WORLD_SIZE={size} is not a place in the job")
        return cls(size=size, rank=rank, local_rank=local)

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def is_main_process() -> bool:
    """Whether this process writes and prints (rank 0, or the only process)."""
    return World.from_env().is_main


def init_processes(timeout_s: float = 1800) -> World:
    """Join the launched processes (once; the trainers reuse the group) and quiet every process but the main one.

    On one process this does nothing. The backend is accelerate's choice, as the Trainer's would be: gloo on a
    CPU, NCCL on CUDA GPUs.
    """
    world = World.from_env()
    if world.size > 1:
        import torch.distributed as dist

        if not dist.is_initialized():
            import torch
            from accelerate import PartialState

            PartialState(cpu=not torch.cuda.is_available(), timeout=timedelta(seconds=timeout_s))
        quiet_replica(world)
    return world


def quiet_replica(world: World | None = None) -> None:
    """On every process but the main one: only errors are logged, warnings are not shown, no progress bars.

    Call it as early as you can (the ``abstain`` command does, first thing): torch reads its C++ log level and
    transformers and vLLM their verbosity from the environment when they load.
    """
    world = world or World.from_env()
    if world.is_main:
        return
    for name, value in (("ABSTAIN_NO_PROGRESS", "1"), ("TORCH_CPP_LOG_LEVEL", "ERROR"),
                        ("TRANSFORMERS_VERBOSITY", "error"), ("VLLM_LOGGING_LEVEL", "ERROR")):
        os.environ[name] = value
    warnings.filterwarnings("ignore")
    for name in ("abstain", "transformers", "trl", "peft", "datasets", "accelerate", "torch", "vllm"):
        logging.getLogger(name).setLevel(logging.ERROR)
    if "transformers" in sys.modules:  # else it reads TRANSFORMERS_VERBOSITY when it loads
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()


def barrier() -> None:
    """Wait until every process got here (no-op on one process)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


class MainProcessFailed(DataError):
    """Raised on the other processes when work only the main process does failed there (it printed why)."""


def main_first(work: Callable[[], T]) -> T | None:
    """Run ``work`` on the main process while the others wait; every process then goes on together.

    If ``work`` raises on the main process, the others raise :class:`MainProcessFailed` with its message
    instead of waiting forever. Returns ``work()``'s result on the main process, None on the others.
    """
    import torch.distributed as dist

    world = World.from_env()
    if not (world.size > 1 and dist.is_available() and dist.is_initialized()):
        return work()
    result: T | None = None
    error: BaseException | None = None
    if world.is_main:
        try:
            result = work()
        except BaseException as exc:  # noqa: BLE001 - re-raised below, after telling the others
            error = exc
    message = [None if error is None else f"{type(error).__name__}: {error}"]
    dist.broadcast_object_list(message, src=0)
    if error is not None:
        raise error
    if message[0] is not None:
        raise MainProcessFailed(f"the main process failed ({message[0]})")
    return result


def agree_on(value: T, check: Callable[[T], str | None]) -> T:
    """The main process's ``value``, given to every process, which ``check`` s it where it runs.

    ``check`` returns None when the value holds on this process, else why not; if it fails on any process,
    every process raises the same :class:`~abstain.schema.DataError` naming each process (rank and host) and
    its reason, so none is left waiting. Used for the checkpoint a run resumes from: on several nodes without a
    filesystem they share, each would otherwise pick its own last checkpoint. On one process: ``check`` alone.
    """
    import socket

    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1):
        problem = check(value)
        if problem:
            raise DataError(problem)
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    value = box[0]
    problem = check(value)
    reports: list[object] = [None] * dist.get_world_size()
    dist.all_gather_object(reports, None if problem is None else (dist.get_rank(), socket.gethostname(), problem))
    failed = [r for r in reports if r is not None]
    if failed:
        raise DataError("the processes do not agree: " + "; ".join(
            f"rank {rank} on {host}: {why}" for rank, host, why in failed))  # type: ignore[misc]
    return value


def warn_single_process_launch() -> None:
    """Say so when ``accelerate launch --cpu --num_processes N`` started one process: it starts N only through
    mpirun, so the run would silently train on one."""
    env = os.environ
    if env.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true") and "MASTER_ADDR" in env and "WORLD_SIZE" not in env:
        log.warning("accelerate launch --cpu started this one process only (it starts several only through mpirun: "
                    "--mpirun_hostfile); training on 1 process. For N processes on CPUs: torchrun --nproc_per_node N, "
                    "or accelerate launch --multi_gpu --num_processes N (gloo)")


@dataclass(frozen=True)
class BatchSplit:
    """A global batch cut over processes: ``batch_size = per_device * accumulation * world_size``."""

    batch_size: int
    world_size: int
    per_device: int
    accumulation: int

    def record(self) -> dict[str, int]:
        """What a run's ``config.json`` records (``distributed``)."""
        return {"world_size": self.world_size, "batch_size": self.batch_size,
                "per_device_batch_size": self.per_device, "gradient_accumulation_steps": self.accumulation}


def split_batch(batch_size: int, world_size: int, accumulation: int | None = None, micro_batch_size: int | None = None,
                multiple_of: int = 1) -> BatchSplit:
    """Cut the global ``batch_size`` over ``world_size`` processes.

    ``micro_batch_size`` (rows per process per forward pass) sets the accumulation (an ``accumulation`` of
    None or 1 then means "follow it"); else ``accumulation`` (default 1) sets the rows per process.
    ``multiple_of``: what every valid global batch must also be a multiple of (GRPO: ``num_generations``).
    A batch that does not divide is an error naming the field, the world size and the nearest valid values.
    """
    if micro_batch_size is not None and accumulation not in (None, 1) and \
            micro_batch_size * accumulation * world_size != batch_size:
        raise DataError(f"recipe fields 'micro_batch_size' ({micro_batch_size}) and 'gradient_accumulation_steps' "
                        f"({accumulation}) on {world_size} process(es) make a batch of "
                        f"{micro_batch_size * accumulation * world_size}, not batch_size {batch_size}: "
                        "give one of them")
    if micro_batch_size is not None:
        unit, what = micro_batch_size * world_size, f"{world_size} process(es) x micro_batch_size {micro_batch_size}"
    else:
        accumulation = accumulation or 1
        unit, what = accumulation * world_size, f"{world_size} process(es)" + (
            f" x gradient_accumulation_steps {accumulation}" if accumulation > 1 else "")
    step = math.lcm(unit, multiple_of)
    if batch_size % step:
        low, high = batch_size // step * step, (batch_size // step + 1) * step
        nearest = f"{low} or {high}" if low else f"{high}"
        extra = f" and a multiple of num_generations {multiple_of}" if multiple_of > 1 else ""
        raise DataError(f"recipe field 'batch_size': {batch_size} does not divide over {what} (the global batch must "
                        f"be a multiple of {unit}{extra}); nearest valid: {nearest}")
    if micro_batch_size is not None:
        return BatchSplit(batch_size, world_size, micro_batch_size, batch_size // unit)
    return BatchSplit(batch_size, world_size, batch_size // unit, accumulation or 1)


def recipe_split(recipe: Recipe, world: World) -> BatchSplit:
    """How ``recipe``'s global batch is cut over ``world``'s processes (GRPO: whole groups in every batch)."""
    return split_batch(recipe.batch_size, world.size, recipe.gradient_accumulation_steps, recipe.micro_batch_size,
                       multiple_of=getattr(recipe, "num_generations", 1))
