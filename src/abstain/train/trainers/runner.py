"""A training run's folder and its course: start (checks, the folder prepared or resumed), logs, progress, finish.

A run folder (``--out``, default ``runs/<recipe name>``) holds:

=====================  ==============================================================================
``config.json``        the resolved recipe (every field, defaults filled in): a rerun with another is refused
``recipe.yaml``        the same recipe as YAML, to rerun it with ``--recipe runs/<name>/recipe.yaml``
``versions.json``      the versions of abstain, torch, transformers, TRL, PEFT, datasets, accelerate, DeepSpeed
``metrics.jsonl``      one line per logged step: TRL's metrics and abstain's (``abstain/...``)
``tensorboard/``       TensorBoard's event files, with ``report_to: [tensorboard]``
                       (:mod:`abstain.train.trainers.tracking`)
``checkpoints/``       ``checkpoint-<step>`` folders (every ``save_steps``); ``--resume`` continues from the last
                       complete one (a half-written one, what a kill leaves, is removed)
``final/``             the trained model and tokenizer (LoRA: merged into the base model; the adapter alone is
                       in ``final/adapter/``): ``abstain eval --model hf:RUN/final`` evaluates it
=====================  ==============================================================================

A rerun with another recipe into the same folder is refused (naming the fields that differ; ``report_to`` and
``run_name`` may differ), as is a rerun into a folder with checkpoints without ``--resume``. Before anything is
written, SFT and DPO rows are measured against ``max_length`` (:mod:`abstain.train.data.lengths`: a row TRL would cut
is refused, or as the recipe's ``truncation`` says dropped or cut, counted in ``config.json``'s ``lengths``) and the
trackers of ``report_to`` are checked (:mod:`abstain.train.trainers.tracking`).

The model a run starts from and how ``final/`` is written are the run's :class:`~abstain.train.trainers.policy.Policy`
(dtype, attention, adapter, checkpointing, sharding); the TRL config is built in
:mod:`abstain.train.trainers.arguments`.

Example (what every trainer does)::

    run, checkpoint = start(recipe, "runs/x", resume=False,   # the folder prepared, the policy resolved
                            rows=lambda: sft_rows(recipe))    # SFT / DPO: the rows, measured (run.rows)
    model, peft_config = run.policy.load()
    trainer = SFTTrainer(model=model, args=trl_config(SFTConfig, recipe, run), ..., callbacks=run.callbacks())
    finish(trainer, run, recipe, checkpoint)                  # trains, then final/ (every process joins the save)
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from abstain.records.runs import RunDir
from abstain.train.data.lengths import Lengths, fit_rows
from abstain.schema import DataError, read_lines, write_json, write_text
from abstain.train.trainers.distributed import (
    BatchSplit,
    World,
    agree_on,
    barrier,
    init_processes,
    main_first,
    recipe_split,
    warn_single_process_launch,
)
from abstain.train.trainers.checkpoints import checkpoint_complete
from abstain.train.trainers.fsdp import check_sharded, enable_fsdp_on_cpus
from abstain.train.trainers.lm_head import compact_lm_head
from abstain.train.trainers.policy import Policy, adapter_dir, resolve_model, resolve_policy
from abstain.train.trainers.tracking import check_report_to, place_tensorboard
from abstain.train.trainers.trl_guard import check_trl
from abstain.train.recipe import TRACKING_FIELDS, Recipe

__all__ = ["CHECKPOINTS", "FINAL", "FINISHED", "METRICS", "ProgressFn", "TrainResult", "TrainRun", "adapter_dir",
           "checkpoint_complete", "export_adapter", "read_json_record", "resolve_model", "start", "finish",
           "versions"]

log = logging.getLogger(__name__)

CHECKPOINTS = "checkpoints"
FINAL = "final"
METRICS = "metrics.jsonl"
FINISHED = "abstain_train.json"  # in final/: the recipe, steps and versions of a finished run
ProgressFn = Callable[[int, int, dict[str, float]], None]


def versions() -> dict[str, str]:
    """Versions of the packages a run depends on (recorded with the run and on a model card)."""
    out = {}
    for name in ("abstain", "torch", "transformers", "trl", "peft", "datasets", "accelerate", "deepspeed"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


@dataclass(frozen=True)
class TrainResult:
    """What a training run produced: its folder, the trained model (``final/``), the optimizer steps, the
    per-step log (``metrics.jsonl``) and, for a pipeline, every stage's result (the last is this one)."""

    out: Path
    final: Path
    steps: int
    metrics: Path
    stages: tuple[TrainResult, ...] = ()
    complete: bool = True  # False: stopped early (``until``) at the checkpoint ``final`` names


class TrainRun:
    """One training run's folder (see the module docstring).

    On N processes only the main one writes it (:mod:`abstain.train.trainers.distributed`); ``split`` is how the
    recipe's global batch is cut over them (set by :func:`start`).
    """

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.path = Path(out)
        self.until: int | None = None  # stop after this step (see start)
        self.checkpoints = self.path / CHECKPOINTS
        self.final = self.path / FINAL
        self.split: BatchSplit | None = None
        self.policy: Policy | None = None  # set by start: the model settings resolved for this launch
        self.rows: list[dict[str, Any]] | None = None  # SFT / DPO: the rows to train on, measured (fit)
        self.lengths: Lengths | None = None  # what fit measured: config.json's lengths

    def record(self, recipe: Recipe) -> dict[str, Any]:
        out: dict[str, Any] = {"recipe": recipe.model_dump(mode="json"), "kind": recipe.kind}
        if self.split is not None:
            out["distributed"] = self.split.record()
        if self.policy is not None:
            out["policy"] = self.policy.record()
        if self.lengths is not None:
            out["lengths"] = self.lengths.record()
        return out

    def fit(self, recipe: Recipe, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The SFT / DPO ``rows`` that fit the recipe's ``max_length`` (:func:`~abstain.train.data.lengths.fit_rows`
        with the model's tokenizer, nothing else loaded): kept in ``rows``, measured in ``lengths``."""
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(resolve_model(recipe.model))
        self.rows, self.lengths = fit_rows(rows, tokenizer, recipe.max_length,  # type: ignore[attr-defined]
                                           recipe.truncation)  # type: ignore[attr-defined]
        return self.rows

    def prepare(self, recipe: Recipe, resume: bool) -> str | None:
        """Create or check the folder; the checkpoint to resume from (None: start afresh).

        With ``resume``, checkpoints a kill left half-written are removed (with a warning) and the run
        continues from the last complete one. On N processes the main one does this while the others wait;
        then each finds the same checkpoint.
        """
        if resume and recipe.trl.get("save_only_model"):
            raise DataError(
                "--resume with recipe field trl.save_only_model: its checkpoints hold the weights only (no optimizer, "
                "scheduler or RNG states), so a resumed run would not continue the same run. Start afresh (another "
                "--out), or leave save_only_model off to be able to resume")
        main_first(lambda: self._prepare_folder(recipe, resume))
        # the main process picks the checkpoint; every process must see that same one, complete (several nodes
        # without a shared filesystem would each find their own last checkpoint)
        chosen = agree_on(self._last_name() if resume else None, self._sees)
        return None if chosen is None else str(self.checkpoints / chosen)

    def _last_name(self) -> str | None:
        last = self.last_checkpoint()
        return None if last is None else last.name

    def _sees(self, name: str | None) -> str | None:
        """None when this process sees checkpoint ``name`` complete (or there is none to see), else why not."""
        if name is None or checkpoint_complete(self.checkpoints / name, self.world_size):
            return None
        return (f"{self.checkpoints / name} (the main process's checkpoint to resume from) is missing or incomplete "
                "here: the run folder must be on a filesystem every node sees")

    def _prepare_folder(self, recipe: Recipe, resume: bool) -> None:
        config = self.path / "config.json"
        before = read_json_record(config) if config.exists() else {}
        size = (before.get("distributed") or {}).get("world_size", 1)
        if before and size != self.world_size:
            raise DataError(
                f"{self.path} was trained on {size} process(es) and this launch has {self.world_size}: resume it on "
                f"{size} (each process's data order and RNG state are in its checkpoints), or choose another --out")
        # a folder from an abstain that recorded no split ran on one process with per_device = batch_size:
        # the same split as now when this is one process without accumulation
        same = self.split is None or (self.split.world_size == 1 and self.split.accumulation == 1)
        ignore = [f"recipe.{name}" for name in TRACKING_FIELDS]  # where the curves go, not what is trained
        if before and "distributed" not in before and same:
            ignore.append("distributed")
        if before and "lengths" not in before:  # measured since: the same rows as before
            ignore.append("lengths")
        RunDir(self.path).prepare(self.record(recipe), ignore=ignore)
        write_text(self.path / "recipe.yaml", yaml.safe_dump(recipe.model_dump(mode="json"), sort_keys=False))
        write_json(self.path / "versions.json", versions())
        found = self.checkpoint_folders()
        if found and not resume:
            raise DataError(f"{self.path} already holds {found[-1].name}: pass --resume to continue it, or "
                            "another --out")
        for folder in found:
            if not checkpoint_complete(folder, self.world_size):
                log.warning("%s: an incomplete checkpoint (the run was killed while writing it): removed; resuming "
                            "from the last complete one", folder)
                shutil.rmtree(folder)
        last = self.last_checkpoint()
        # the steps after the checkpoint are trained, and logged, again
        self.trim_metrics(int(last.name.rsplit("-", 1)[-1]) if last is not None and resume else 0)

    @property
    def world_size(self) -> int:
        return self.split.world_size if self.split is not None else 1

    def checkpoint_folders(self) -> list[Path]:
        """Every ``checkpoint-<step>`` folder, by step (complete or not)."""
        found = [p for p in self.checkpoints.glob("checkpoint-*") if p.name.split("-")[-1].isdigit()]
        return sorted(found, key=lambda p: int(p.name.split("-")[-1]))

    def last_checkpoint(self) -> Path | None:
        """The complete checkpoint of the highest step (see :func:`checkpoint_complete`), or None."""
        complete = [p for p in self.checkpoint_folders() if checkpoint_complete(p, self.world_size)]
        return complete[-1] if complete else None

    def read_metrics(self) -> list[dict[str, Any]]:
        """The logged steps so far (a half-written last line, what a kill mid-write leaves, is cut off)."""
        path = self.path / METRICS
        if not path.exists():
            return []
        return [row for _, row in read_lines(path, json.loads, repair_tail=True)]

    def callbacks(self, progress: ProgressFn | None = None) -> list[Any]:
        """A transformers callback that appends every log to ``metrics.jsonl`` and reports progress."""
        from transformers import TrainerCallback

        run = self

        class _Log(TrainerCallback):
            def on_log(self, args, state, control, logs=None, **kwargs):  # type: ignore[no-untyped-def]
                if not logs or "train_runtime" in logs or not state.is_world_process_zero:
                    return
                row = {"step": state.global_step, **{k: _plain(v) for k, v in logs.items()}}
                with (run.path / METRICS).open("a", encoding="utf-8") as out:
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    os.fsync(out.fileno())
                if progress is not None:
                    progress(state.global_step, state.max_steps, row)

            def on_train_begin(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
                if progress is not None and state.is_world_process_zero:
                    progress(state.global_step, state.max_steps, {})

        return [_Log()]

    def trim_metrics(self, step: int) -> None:
        """Drop logged steps after ``step`` (a resumed run logs them again from its checkpoint)."""
        path = self.path / METRICS
        if path.exists():
            rows = [r for r in self.read_metrics() if r.get("step", 0) <= step]
            write_text(path, "".join(json.dumps(r) + "\n" for r in rows))

    def write_finished(self, recipe: Recipe, steps: int) -> None:
        """``final/abstain_train.json``: the recipe, steps and versions of a finished run (written last)."""
        write_json(self.final / FINISHED, {"recipe": recipe.model_dump(mode="json"), "steps": steps,
                                           "versions": versions()})

    def finished(self) -> TrainResult | None:
        """What an earlier session's finished run produced (``final/abstain_train.json``), else None."""
        path = self.final / FINISHED
        if not path.exists():
            return None
        record = read_json_record(path)
        return TrainResult(self.path, self.final, int(record["steps"]), self.path / METRICS)

    def finished_recipe(self) -> dict[str, Any] | None:
        """The recipe a finished run was trained with (``final/abstain_train.json``), else None."""
        path = self.final / FINISHED
        return read_json_record(path)["recipe"] if path.exists() else None


def read_json_record(path: Path) -> dict[str, Any]:
    """A JSON object abstain wrote (``abstain_train.json``, ``pipeline.json``); errors name the file."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: invalid JSON ({exc}); delete it to redo what it records") from None
    if not isinstance(record, dict):
        raise DataError(f"{path}: expected a JSON object")
    return record


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    return value


def start(recipe: Recipe, out: str, resume: bool, until: int | None = None,
          rows: Callable[[], list[dict[str, Any]]] | None = None,
          check: Callable[[TrainRun], object] | None = None) -> tuple[TrainRun, str | None]:
    """Threads and quiet libraries, the run folder prepared (or checked), and the checkpoint to resume from.

    ``until``: stop after that optimizer step with a checkpoint (a part of a long run; ``--resume`` continues it).
    ``rows`` (SFT, DPO): makes the training rows, which are measured against ``max_length`` (:meth:`TrainRun.fit`)
    before anything is written; the run keeps those that fit in ``run.rows``. ``check`` (GRPO: its TRL config built
    once) runs once the processes have joined, before anything is written: what it raises leaves ``out`` untouched.
    """
    if until is not None and until < 1:
        raise ValueError(f"until must be a step >= 1, got {until}")
    check_trl()  # a TRL whose private parts abstain was not tested against fails here, before anything
    set_threads(recipe.threads)
    warn_single_process_launch()
    world = World.from_env()
    run = TrainRun(out)
    run.until = until
    run.policy = resolve_policy(recipe)  # what cannot be honoured fails here, before anything is written or trained
    if run.policy.sharding.kind == "fsdp":  # on CPUs accelerate would run it as DDP (abstain.train.trainers.fsdp)
        enable_fsdp_on_cpus()
    run.split = recipe_split(recipe, world)  # a batch that does not divide fails here, before anything is written
    check_report_to(recipe.report_to)  # a tracker that is not installed fails here, before anything is written
    if rows is not None:  # a row TRL would cut fails here (the tokenizer only), before anything is written
        run.fit(recipe, rows())
    join_processes(recipe)
    if check is not None:
        check(run)
    checkpoint = run.prepare(recipe, resume)
    return run, checkpoint


def join_processes(*recipes: Recipe) -> None:
    """Join the launched processes (:func:`~abstain.train.trainers.distributed.init_processes`; nothing on one process),
    after building the bundled model's cache if a recipe needs it: once the processes have joined, transformers
    saves a model only on rank 0, and a cache built on another would lack its weights."""
    if any(r.model == "bundled" for r in recipes):
        resolve_model("bundled")
    init_processes(max(float(r.trl.get("ddp_timeout", 1800)) for r in recipes))


def finish(trainer: Any, run: TrainRun, recipe: Recipe, checkpoint: str | None) -> TrainResult:
    """Train (from ``checkpoint``), save ``final/`` (every process takes part: :meth:`Policy.save`) and say what
    came out.

    A run started with ``until`` below its last step stops there with a checkpoint and no ``final/``; its
    result's ``final`` is that checkpoint and ``complete`` is False.
    """
    check_sharded(trainer, run.policy.sharding.kind if run.policy is not None else None, run.world_size)
    if run.until is not None:
        trainer.add_callback(_stop_at(run.until))
    place_tensorboard(trainer, run.path)
    with compact_lm_head():  # on a CPU, TRL's LM head projects only the completion (abstain.train.trainers.lm_head)
        quiet(trainer).train(resume_from_checkpoint=checkpoint)
    barrier()  # every process's last checkpoint files are written
    if trainer.state.global_step < trainer.state.max_steps:
        last = run.last_checkpoint()
        if last is None:  # pragma: no cover - _stop_at saves before stopping
            raise RuntimeError(f"{run.path}: stopped at step {trainer.state.global_step} without a checkpoint")
        return TrainResult(run.path, last, trainer.state.global_step, run.path / METRICS, complete=False)
    assert run.policy is not None, "finish() needs a run from start()"
    from abstain.train.trainers.validate import load_best

    best = load_best(trainer, recipe)  # validation.final: best
    if best is not None:
        log.info("final/ holds the best validation's checkpoint (step %d, %s %s)", best,
                 recipe.validation.metric if recipe.validation else "", trainer.state.best_metric)
    run.policy.save(trainer, run.final)
    main_first(lambda: run.write_finished(recipe, trainer.state.global_step))
    return TrainResult(run.path, run.final, trainer.state.global_step, run.path / METRICS)


def _stop_at(step: int) -> Any:
    """A callback that saves a checkpoint and stops training once ``step`` optimizer steps are done."""
    from transformers import TrainerCallback

    class StopAt(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            if state.global_step >= step and state.global_step < state.max_steps:
                control.should_save = True
                control.should_training_stop = True
            return control

    return StopAt()


def set_threads(n: int) -> None:
    """Torch's CPU threads, and quiet libraries: abstain shows one progress bar and writes metrics.jsonl.

    ``n`` is the machine's: each of the N processes a launcher started on it takes ``n // N`` (at least 1).
    """
    import warnings

    import torch
    from transformers.utils import logging as hf_logging

    local = int(os.environ.get("LOCAL_WORLD_SIZE", "1") or 1)
    torch.set_num_threads(max(1, n // max(local, 1)))
    if not torch.cuda.is_available():  # DeepSpeed (imported by accelerate wherever installed) says so on every run
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
    hf_logging.disable_progress_bar()
    # said by transformers' own Trainer about its own call, on every step of every run: nothing a user can change
    warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.* is deprecated", category=FutureWarning)
    try:
        import datasets

        datasets.disable_progress_bars()
    except ImportError:  # pragma: no cover
        pass


def quiet(trainer: Any) -> Any:
    """Remove the callback that prints every log dict (metrics.jsonl and the progress bar have them)."""
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)
    return trainer


def export_adapter(run: str, out: str | os.PathLike[str], card: str, half: bool = True) -> Path:
    """Copy a run's LoRA adapter to ``out`` (float16 weights by default: half the size, the same merged
    model up to rounding) with ``card`` as its ``README.md``; returns ``out``."""
    import torch
    from safetensors.torch import load_file, save_file

    source = adapter_dir(run)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    weights = load_file(str(source / "adapter_model.safetensors"))
    if half:
        weights = {k: v.to(torch.float16) for k, v in weights.items()}
    save_file(weights, str(target / "adapter_model.safetensors"), metadata={"format": "pt"})
    config = json.loads((source / "adapter_config.json").read_text(encoding="utf-8"))
    config["base_model_name_or_path"] = "bundled"  # resolved at load time: abstain.backends.adapted
    (target / "adapter_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    (target / "README.md").write_text(card, encoding="utf-8")
    return target
