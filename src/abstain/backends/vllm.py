"""Offline generation with vLLM's ``LLM`` engine on a GPU machine (``pip install 'abstain[vllm]'``).

The prompts are rendered with the model's chat template (as :class:`~abstain.backends.hf.HFBackend`
does), tokenized without extra special tokens and handed to ``LLM.generate`` as token prompts, each
with its own ``SamplingParams``: temperature, top-p, ``max_tokens`` and a seed from
:func:`~abstain.backends.base.sample_seed`. Each *sample* is its own request with ``n=1`` and the seed of
its (prompt, sample) pair — the same seed the ``hf`` and ``openai`` backends use — so a prompt's samples
depend neither on the rest of the batch nor on how many samples were asked for (:func:`sample_requests`);
greedy decoding sends one request per prompt and copies its text.
vLLM schedules the batches itself. A ``<think>`` opened by the chat template is put back in front of
the text, as in the ``hf`` backend.

Example (on a GPU machine)::

    backend = VLLMBackend("Qwen/Qwen2.5-7B-Instruct", VLLMOptions(gpu_memory_utilization=0.85))
    backend.generate([[{"role": "user", "content": "What is 2 + 3?"}]], GenerationConfig(max_new_tokens=64))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from abstain.backends.base import (
    GenerationConfig,
    GenerationStats,
    Message,
    MissingDependencyError,
    sample_seed,
    template_think_prefix,
)

__all__ = ["VLLMBackend", "VLLMOptions", "sample_requests"]

INSTALL_HINT = "vllm is not installed: pip install 'abstain[vllm]' on a GPU machine (vLLM needs CUDA)"


@dataclass(frozen=True)
class VLLMOptions:
    """Engine settings of :class:`VLLMBackend` (anything else goes to ``engine_args``)."""

    dtype: str = field(default="auto", metadata={"help": "auto | bfloat16 | float16 | float32"})
    tensor_parallel_size: int = field(default=1, metadata={"help": "GPUs to shard the model over"})
    gpu_memory_utilization: float = field(default=0.9, metadata={"help": "share of GPU memory vLLM may take"})
    max_model_len: int | None = field(default=None, metadata={"help": "context length (None: the model's)"})
    seed: int = field(default=0, metadata={"help": "engine seed (per-request seeds decide the samples)"})
    trust_remote_code: bool = field(default=False, metadata={"help": "run the model repository's own code"})
    engine_args: dict[str, Any] = field(default_factory=dict, metadata={"help": "more vllm.LLM keyword arguments"})

    def __post_init__(self) -> None:
        if self.tensor_parallel_size < 1:
            raise ValueError("tensor_parallel_size must be >= 1")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError("gpu_memory_utilization must be in (0, 1]")


def _import_vllm() -> Any:
    try:
        import vllm
    except ImportError as exc:
        raise MissingDependencyError(INSTALL_HINT) from exc
    return vllm


def sample_requests(prompts: Sequence[list[Message]], config: GenerationConfig) -> list[tuple[int, int, int]]:
    """The (prompt index, sample index, seed) of every request: one per sample, or one per prompt when greedy.

    Example:
        >>> p = [[{"role": "user", "content": "hi"}]]
        >>> reqs = sample_requests(p, GenerationConfig(temperature=1.0, n=2, seed=3))
        >>> [(i, k) for i, k, _ in reqs], reqs[1][2] == sample_seed(p[0], 1, 3)
        ([(0, 0), (0, 1)], True)
    """
    samples = 1 if config.greedy else config.n
    return [(i, k, sample_seed(p, k, config.seed)) for i, p in enumerate(prompts) for k in range(samples)]


class VLLMBackend:
    """A :class:`~abstain.backends.base.Backend` on ``vllm.LLM`` (see the module doc)."""

    batch_size = 256  # vLLM batches continuously; callers may hand it large chunks

    def __init__(self, model: str, options: VLLMOptions = VLLMOptions(), name: str | None = None) -> None:
        self._vllm = _import_vllm()
        self.name = name or f"vllm:{model}"
        self.stats = GenerationStats()
        kwargs = {"max_model_len": options.max_model_len} if options.max_model_len else {}
        self.llm = self._vllm.LLM(
            model=model, dtype=options.dtype, tensor_parallel_size=options.tensor_parallel_size,
            gpu_memory_utilization=options.gpu_memory_utilization, seed=options.seed,
            trust_remote_code=options.trust_remote_code, **kwargs, **options.engine_args,
        )
        self.tokenizer = self.llm.get_tokenizer()

    def generate(self, prompts: Sequence[list[Message]], config: GenerationConfig) -> list[list[str]]:
        """``config.n`` texts per prompt, in prompt order (greedy: one decode, copied ``n`` times)."""
        if self.llm is None:
            raise RuntimeError(f"{self.name}: generate() after close()")
        rendered = [self.tokenizer.apply_chat_template(p, add_generation_prompt=True, tokenize=False) for p in prompts]
        token_ids = [self.tokenizer(r, add_special_tokens=False)["input_ids"] for r in rendered]
        requests = sample_requests(prompts, config)
        params = [
            self._vllm.SamplingParams(n=1, temperature=config.temperature, top_p=config.top_p,
                                      max_tokens=config.max_new_tokens, seed=seed)
            for _, _, seed in requests
        ]
        outputs = self.llm.generate([{"prompt_token_ids": token_ids[i]} for i, _, _ in requests], params,
                                    use_tqdm=False)
        texts: list[list[str]] = [[] for _ in prompts]
        for (i, _, _), out in zip(requests, outputs, strict=True):
            texts[i].append(template_think_prefix(rendered[i]) + out.outputs[0].text)
        self.stats.prompts += len(prompts)
        self.stats.samples += len(prompts) * config.n
        self.stats.new_tokens += sum(len(out.outputs[0].token_ids) for out in outputs)
        return [t * config.n if config.greedy else t for t in texts]

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def close(self) -> None:
        self.llm = None
