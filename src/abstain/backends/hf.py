"""Local generation with transformers: chat template, length-sorted left-padded batches, seeded sampling.

:class:`HFBackend` loads a local directory, a ``.gguf`` file (dequantized) or a hub id (from the local
Hugging Face cache only when ``HF_HUB_OFFLINE=1``), applies the tokenizer's chat template, sorts the
prompts by token length, generates in left-padded batches of ``HFOptions.batch_size`` rows and returns
the texts in the caller's order. The tokens that all prompts of a batch share (system prompt, protocol
instructions: about two thirds of the demo's prompt tokens) are prefilled once and their KV cache copied
to every row; the padding then sits between that prefix and the rest, which the attention mask and the
mask-derived positions make harmless (``prefix_cache=False`` switches it off).

Determinism: greedy decoding is a pure function of the prompt. Sampling draws every row's tokens from
its own ``torch.Generator`` seeded with :func:`abstain.backends.base.sample_seed` (prompt, sample index,
``GenerationConfig.seed``), so a prompt's samples do not depend on which prompts share its batch.
Temperature and top-p are the only sampling settings (no top-k, no repetition penalty: the model's own
``generation_config.json`` defaults are not applied), the same as the ``openai`` and ``vllm`` backends.

Text: decoding drops the special tokens (EOS, padding) but keeps ``<think>``/``</think>`` even where a
tokenizer marks them special, and a ``<think>`` that the chat template opened in the prompt is put back
in front of the text, so reasoning is stored whole (the parser keeps it out of the decision).

Threads: at most ``HFOptions.num_threads`` (2) torch threads on CPU (see ``abstain.backends`` for
``OMP_WAIT_POLICY``).

Example (the bundled model; ``make_backend("bundled")`` does the same)::

    from abstain.backends import GenerationConfig, HFBackend, bundled_model_dir
    backend = HFBackend(bundled_model_dir(), name="bundled")
    backend.generate([[{"role": "user", "content": "What is 2 + 3?"}]], GenerationConfig(max_new_tokens=8))
    # -> [['2 + 3 = 5']]
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GgufConfig,
    LogitsProcessor,
    LogitsProcessorList,
    TopPLogitsWarper,
)
from transformers import GenerationConfig as HFGenerationConfig

from abstain.backends.base import (
    GenerationConfig,
    ScoredText,
    GenerationStats,
    Message,
    sample_seed,
    template_think_prefix,
)
from abstain.backends.token_scores import decoded_ends

__all__ = ["HFBackend", "HFOptions", "SeededSampler", "TokenScoreRecorder", "load_model"]

log = logging.getLogger(__name__)

_MIN_PREFIX = 16  # shorter shared prefixes are not worth a separate prefill
_DTYPES = {"auto": "auto", "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class HFOptions:
    """How :class:`HFBackend` loads and batches a model."""

    batch_size: int = field(default=32, metadata={"help": "rows (prompt x sample) per model.generate call"})
    num_threads: int | None = field(default=2, metadata={"help": "torch CPU threads (None: leave torch's)"})
    device: str | None = field(default=None, metadata={"help": "cpu, cuda, cuda:1 ... (None: cuda if present)"})
    device_map: str | None = field(default=None, metadata={
        "help": "a model larger than one GPU: transformers' device_map (auto, balanced, sequential) spreads its layers "
                "over the GPUs (accelerate's dispatch); instead of device"})
    dtype: str | None = field(
        default=None, metadata={"help": "auto | float32 | bfloat16 | float16 (None: float32 on CPU, auto on GPU)"}
    )
    trust_remote_code: bool = field(default=False, metadata={"help": "run the model repository's own code"})
    chat_template: str | None = field(default=None, metadata={"help": "a Jinja template replacing the model's"})
    prefix_cache: bool = field(
        default=True, metadata={"help": "prefill the tokens all prompts of a batch share once (system prompt, instructions)"}
    )
    attn_implementation: str | None = field(
        default=None, metadata={"help": "transformers' attention: sdpa | eager | flash_attention_2 (None: the model's)"}
    )
    cudnn_attention: bool = field(default=False, metadata={
        "help": "GPU: let SDPA use cuDNN's attention (off: flash / memory-efficient / math only; cuDNN's kernel made "
                "bf16 decoding slower, docs/benchmarks.md#on-a-gpu)"})
    compile: bool = field(default=False, metadata={
        "help": "GPU: a static KV cache and torch.compile'd decoding (CUDA graphs); the first batch of each shape "
                "compiles (tens of seconds), so it pays off on long runs. Turns prefix_cache off"})

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if self.num_threads is not None and self.num_threads < 1:
            raise ValueError("num_threads must be >= 1 (or None to leave torch's setting)")
        if self.dtype is not None and self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}, got {self.dtype!r}")
        if self.device_map is not None and self.device is not None:
            raise ValueError(f"give device ({self.device}) or device_map ({self.device_map}), not both")
        if self.attn_implementation not in (None, "sdpa", "eager", "flash_attention_2", "flash_attention_3"):
            raise ValueError("attn_implementation must be sdpa, eager, flash_attention_2 or flash_attention_3, got "
                             f"{self.attn_implementation!r}")


class SeededSampler(LogitsProcessor):
    """Temperature + top-p sampling with one ``torch.Generator`` per batch row.

    It returns scores that are ``-inf`` except at the drawn token, so ``generate`` runs greedy on top
    of it; a row's draws depend only on its own seed and logits, never on the other rows.
    """

    def __init__(self, seeds: Sequence[int], temperature: float, top_p: float, device: torch.device) -> None:
        self.generators = [torch.Generator(device=device).manual_seed(int(s)) for s in seeds]
        self.temperature = temperature
        self.top_p = TopPLogitsWarper(top_p) if top_p < 1 else None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        scores = scores.float() / self.temperature
        if self.top_p is not None:
            scores = self.top_p(input_ids, scores)
        probs = scores.softmax(dim=-1)
        # with a device_map the logits may sit on another GPU than the generators (the first layer's)
        drawn = torch.stack([torch.multinomial(p.to(g.device), 1, generator=g)
                             for p, g in zip(probs, self.generators, strict=True)]).to(scores.device)
        return torch.full_like(scores, float("-inf")).scatter_(1, drawn, 0.0)


class TokenScoreRecorder(LogitsProcessor):
    """Records every step's raw log-probabilities before any sampling processor: the chosen token's (known at the
    next step, or from the output for the last) and the entropy of the top ``k``. It leaves the scores as they are.
    """

    def __init__(self, k: int) -> None:
        self.k = k
        self._previous: torch.Tensor | None = None
        self._chosen: list[torch.Tensor] = []
        self._entropies: list[torch.Tensor] = []
        self.first: tuple[torch.Tensor, torch.Tensor] | None = None  # the first step's top-k (values, ids)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        logp = torch.log_softmax(scores.float(), dim=-1)
        if self._previous is not None:
            self._chosen.append(self._previous.gather(1, input_ids[:, -1:].to(logp.device)).squeeze(1))
        top = logp.topk(min(self.k, logp.shape[-1]), dim=-1)
        if self.first is None:
            self.first = (top.values.cpu(), top.indices.cpu())
        self._entropies.append(-(top.values.exp() * top.values).nan_to_num(0.0).sum(-1))
        self._previous = logp
        return scores

    def rows(self, new: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(log-probabilities, entropies), each ``rows x steps``, for the new token ids ``new`` (``rows x steps``)."""
        if self._previous is None or new.shape[1] == 0:
            empty = torch.zeros((new.shape[0], 0))
            return empty, empty
        last = self._previous.gather(1, new[:, -1:].to(self._previous.device)).squeeze(1)
        chosen = torch.stack([*self._chosen, last], dim=1)[:, : new.shape[1]]
        return chosen.cpu(), torch.stack(self._entropies, dim=1)[:, : new.shape[1]].cpu()


def _offline() -> bool:
    return any(os.environ.get(k, "").lower() in ("1", "true", "yes", "on") for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _resolve_device(device: str | None) -> torch.device:
    return torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))


def load_model(model: str | Path, options: HFOptions = HFOptions()) -> tuple[Any, Any]:
    """``(model, tokenizer)`` from a local directory, a ``.gguf`` file or a hub id (see the module doc)."""
    text = str(model)
    path = Path(text).expanduser()
    kwargs: dict[str, Any] = {"trust_remote_code": options.trust_remote_code}
    if options.attn_implementation:
        kwargs["attn_implementation"] = options.attn_implementation
    hub = False
    if path.is_file() and path.suffix == ".gguf":
        source, kwargs["gguf_file"] = str(path.parent), path.name
    elif path.is_dir():
        source = str(path)
    elif path.exists():
        raise ValueError(f"{text}: neither a model directory nor a .gguf file")
    elif text.startswith((".", "/", "~")) or text.endswith(".gguf") or text.count("/") > 1:
        raise FileNotFoundError(f"{text}: no such model directory or file")
    else:
        source, hub = text, True
        kwargs["local_files_only"] = _offline()
    device = _resolve_device(options.device)
    dtype = _DTYPES[options.dtype or ("float32" if device.type == "cpu" else "auto")]
    if options.device_map is not None:
        kwargs["device_map"] = options.device_map
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a one-second "Loading weights" bar would only clutter our own
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        if "gguf_file" in kwargs:  # dequantize: a plain dense model, no quantizer attached
            kwargs["quantization_config"] = GgufConfig(dequantize=True)
        net = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **kwargs)
    except OSError as exc:
        if hub and kwargs["local_files_only"]:
            raise FileNotFoundError(
                f"model {text!r} is not a local path and not in the Hugging Face cache, and HF_HUB_OFFLINE=1 "
                f"forbids downloading it: run `hf download {text}` where the network is allowed, or pass hf:<local dir>"
            ) from exc
        raise
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    return (net if options.device_map is not None else net.to(device)).eval(), tokenizer


class HFBackend:
    """A :class:`~abstain.backends.base.Backend` on a transformers causal LM (see the module doc).

    Attributes:
        name: the backend spec or model name recorded in run files.
        batch_size: rows per forward batch (callers may chunk their work by it).
        stats: running totals (prompts, samples, generated tokens, seconds).
    """

    returns_logprobs = True  # GenerationConfig.logprobs > 0 gives ScoredText

    def __init__(self, model: str | Path, options: HFOptions = HFOptions(), name: str | None = None) -> None:
        self._set_threads(options)
        net, tokenizer = load_model(model, options)
        self._setup(net, tokenizer, options, name or f"hf:{model}")

    @classmethod
    def from_model(cls, model: Any, tokenizer: Any, name: str, options: HFOptions = HFOptions()) -> HFBackend:
        """Wrap a model already in memory (e.g. one being trained); it is switched to eval mode."""
        self = cls.__new__(cls)
        self._set_threads(options)
        self._setup(model.eval(), tokenizer, options, name)
        return self

    @staticmethod
    def _set_threads(options: HFOptions) -> None:
        if options.num_threads is not None and _resolve_device(options.device).type == "cpu":
            torch.set_num_threads(min(options.num_threads, os.cpu_count() or 1))

    def _setup(self, model: Any, tokenizer: Any, options: HFOptions, name: str) -> None:
        self.name, self.options, self.batch_size = name, options, options.batch_size
        self.model, self.tokenizer = model, tokenizer
        self.stats = GenerationStats()
        template = options.chat_template or tokenizer.chat_template
        if not template:
            raise ValueError(f"{name}: the tokenizer has no chat template; pass the option chat_template='<jinja>'")
        self._template = template
        eos = model.generation_config.eos_token_id
        eos_ids = {*(eos if isinstance(eos, list) else [eos]), tokenizer.eos_token_id} - {None}
        if not eos_ids:
            raise ValueError(f"{name}: neither the model nor the tokenizer defines an end-of-sequence token")
        self._eos = frozenset(int(i) for i in eos_ids)
        self._pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(self._eos)
        special = set(tokenizer.all_special_ids)
        special |= {i for i, tok in tokenizer.added_tokens_decoder.items() if getattr(tok, "special", False)}
        self._drop = frozenset(i for i in special if "think" not in tokenizer.convert_ids_to_tokens(i))
        # transformers 5 names the KV cache argument `cache`; 4.x called it `past_key_values`
        self._cache_arg = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"

    # -- the Backend interface ---------------------------------------------------------------------

    def generate(self, prompts: Sequence[list[Message]], config: GenerationConfig) -> list[list[str]]:
        """``config.n`` texts per prompt, in prompt order (greedy: one decode, copied ``n`` times)."""
        start = time.perf_counter()
        rendered = [self.render(p) for p in prompts]
        ids = self.tokenizer(rendered, add_special_tokens=False)["input_ids"] if prompts else []
        draws = 1 if config.greedy else config.n
        rows = sorted(((i, k) for i in range(len(prompts)) for k in range(draws)), key=lambda r: -len(ids[r[0]]))
        texts: list[list[str]] = [[""] * draws for _ in prompts]
        tokens = 0
        for s in range(0, len(rows), self.batch_size):
            chunk = rows[s : s + self.batch_size]
            seeds = None if config.greedy else [sample_seed(prompts[i], k, config.seed) for i, k in chunk]
            recorder = TokenScoreRecorder(config.logprobs) if config.logprobs else None
            batch = self._generate_batch([ids[i] for i, _ in chunk], config, seeds, recorder)
            self.stats.steps += batch.shape[1]
            self.stats.batches += 1
            scores = recorder.rows(batch) if recorder is not None else None
            for j, ((i, k), new) in enumerate(zip(chunk, batch, strict=True)):
                prefix = template_think_prefix(rendered[i])
                if scores is None:
                    text, count = self.decode(new)
                    texts[i][k] = prefix + text
                else:
                    first = None if recorder.first is None else (recorder.first[0][j], recorder.first[1][j])
                    scored, count = self.decode_scored(new, scores[0][j], scores[1][j], first)
                    texts[i][k] = scored.with_prefix(prefix)
                tokens += count
        self.stats.prompts += len(prompts)
        self.stats.samples += len(prompts) * config.n
        self.stats.new_tokens += tokens
        self.stats.seconds += time.perf_counter() - start
        return [t * config.n if config.greedy else t for t in texts]

    def close(self) -> None:
        """Drop the model (its memory is freed once no one else holds it)."""
        self.model = None
        gc.collect()

    # -- helpers -------------------------------------------------------------------------------------

    def render(self, messages: list[Message]) -> str:
        """The chat-templated prompt text, ending with the assistant turn's opening."""
        return self.tokenizer.apply_chat_template(
            messages, chat_template=self._template, add_generation_prompt=True, tokenize=False
        )

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under this model's tokenizer."""
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def generation_config(self, config: GenerationConfig) -> HFGenerationConfig:
        """The transformers settings of one call: greedy on top of :class:`SeededSampler` when sampling."""
        extra: dict[str, Any] = {"cache_implementation": "static"} if self.options.compile else {}
        return HFGenerationConfig(
            max_new_tokens=config.max_new_tokens, do_sample=False, num_beams=1, repetition_penalty=1.0,
            no_repeat_ngram_size=0, pad_token_id=self._pad, eos_token_id=sorted(self._eos), **extra,
        )

    def _shared_prefix(self, seqs: list[list[int]]) -> int:
        """Tokens all rows start with, to prefill once (0: not worth it, or switched off)."""
        if not self.options.prefix_cache or self.options.compile or len(seqs) < 2:
            return 0
        shared = min(len(os.path.commonprefix(seqs)), min(map(len, seqs)) - 1)  # every row keeps >= 1 token
        return shared if shared >= _MIN_PREFIX else 0

    def _generate_batch(self, seqs: list[list[int]], config: GenerationConfig, seeds: list[int] | None,
                        recorder: TokenScoreRecorder | None = None) -> torch.Tensor:
        """New token ids per row. Layout: [shared prefix][left padding][rest of the prompt]."""
        if self.model is None:
            raise RuntimeError(f"{self.name}: generate() after close()")
        device = self.model.device
        shared = self._shared_prefix(seqs)
        width = max(map(len, seqs)) - shared
        pads = [width - len(s) + shared for s in seqs]
        ids = torch.tensor([s[:shared] + [self._pad] * p + s[shared:] for s, p in zip(seqs, pads)], device=device)
        mask = torch.tensor([[1] * shared + [0] * p + [1] * (len(s) - shared) for s, p in zip(seqs, pads)], device=device)
        kwargs: dict[str, Any] = {}
        processors: list[LogitsProcessor] = [recorder] if recorder is not None else []  # the raw logits first
        if seeds is not None:
            processors.append(SeededSampler(seeds, config.temperature, config.top_p, device))
        if processors:
            kwargs["logits_processor"] = LogitsProcessorList(processors)
        with torch.inference_mode(), self._attention_kernels(device):
            if shared:  # positions come from the mask's cumsum, so the padding in the middle is harmless
                out = self.model(input_ids=ids[:1, :shared], use_cache=True, logits_to_keep=1)
                cache = getattr(out, self._cache_arg)
                cache.batch_repeat_interleave(len(seqs))
                kwargs[self._cache_arg] = cache
            out = self.model.generate(
                input_ids=ids, attention_mask=mask, generation_config=self.generation_config(config), **kwargs
            )
        return out[:, ids.shape[1] :].cpu()

    def _attention_kernels(self, device: torch.device) -> Any:
        """On a GPU, SDPA without cuDNN's attention unless ``cudnn_attention`` (a no-op elsewhere)."""
        if device.type != "cuda" or self.options.cudnn_attention:
            return contextlib.nullcontext()
        from torch.nn.attention import SDPBackend, sdpa_kernel

        return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])

    def decode(self, new: torch.Tensor) -> tuple[str, int]:
        """(text, tokens generated): up to the first EOS (counted), special tokens but ``<think>`` dropped."""
        ids = new.tolist()
        end = next((j for j, t in enumerate(ids) if t in self._eos), None)
        kept = [t for t in ids[:end] if t not in self._drop]
        text = self.tokenizer.decode(kept, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        return text, len(ids) if end is None else end + 1

    def decode_scored(self, new: torch.Tensor, logprobs: torch.Tensor, entropies: torch.Tensor,
                      first: tuple[torch.Tensor, torch.Tensor] | None = None) -> tuple[ScoredText, int]:
        """:meth:`decode` with the kept tokens' log-probabilities and entropies (EOS and dropped tokens left out) and
        the first step's top alternatives ``first`` (values, ids)."""
        text, count = self.decode(new)
        ids = new.tolist()
        end = next((j for j, t in enumerate(ids) if t in self._eos), len(ids))
        keep = [j for j in range(end) if ids[j] not in self._drop]
        ends = decoded_ends(lambda part: self.tokenizer.decode(part, skip_special_tokens=False,
                                                               clean_up_tokenization_spaces=False),
                            [ids[j] for j in keep], text)
        alternatives = [] if first is None else [
            (self.tokenizer.decode([int(i)], skip_special_tokens=False), float(v)) for v, i in zip(*first, strict=True)]
        return ScoredText(text, logprobs[keep].tolist(), entropies[keep].tolist(), ends, alternatives), count
