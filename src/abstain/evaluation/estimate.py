"""What a run will send a model's server, counted before anything is sent: requests, prompt tokens (estimated) and
completion tokens (at most), pass by pass, and whether the server is remote (what ``abstain eval`` and ``abstain
probe`` ask about before a run against an ``openai:`` model: :mod:`abstain.cli.confirm`).

The count follows what the run does: every protocol's prompts (``--protocol all`` is four times the prompts), one
request per sample (one per prompt when greedy; a probe's ``--k`` samples each), ``consistency:K`` asking ``K`` more
per response, ``p_true`` one more per response at most (only responses that propose an answer are asked); in a run
folder that holds rows already, only what a rerun still sends (unfinished chunks, rows without a confidence value).
Prompt tokens are estimated at 4 characters a token plus 4 a message (no tokenizer of a remote model is at hand);
completion tokens are the ``--max-tokens`` budget of every request, an upper bound (a reasoning model's hidden
reasoning counts within it). An LLM judge's requests go to its own server and are not counted.

Example:
    >>> e = estimate_requests(EvalConfig(model="openai:m", suite="quick", limit=4, protocols=("idk", "attribution"),
    ...                                  max_tokens=100))
    >>> e.requests, e.completion_tokens, e.prompt_tokens > 0
    (8, 800, True)
    >>> is_remote("https://api.openai.com/v1", environ={}), is_remote("http://127.0.0.1:8000/v1", environ={})
    (True, False)
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from abstain.confidence import estimator_of, samples_of
from abstain.confidence.p_true import p_true_prompt
from abstain.records.runs import RESPONSES, SCORED
from abstain.evaluation.run import EvalConfig, eval_prompts
from abstain.schema import Message

__all__ = ["REMOTE_ENV", "Pass", "RequestEstimate", "estimate_requests", "is_remote", "prompt_tokens"]

#: ``1``: a loopback server counts as remote too (asked about first), e.g. a local server standing in for an API
REMOTE_ENV = "ABSTAIN_TREAT_AS_REMOTE"
CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 4


def is_remote(base_url: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``base_url`` is a server on another machine: any host but ``localhost`` and loopback addresses
    (127.0.0.0/8, ::1); every host when ``ABSTAIN_TREAT_AS_REMOTE=1``.

    Example:
        >>> is_remote("http://localhost:8000/v1", environ={}), is_remote("http://[::1]:8000/v1", environ={})
        (False, False)
        >>> is_remote("http://gpu-host:8000/v1", environ={}), is_remote("http://127.0.0.1/v1", {REMOTE_ENV: "1"})
        (True, True)
    """
    environ = os.environ if environ is None else environ
    if environ.get(REMOTE_ENV, "").strip() == "1":
        return True
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name
        return True


def prompt_tokens(messages: Sequence[Message]) -> int:
    """About how many tokens ``messages`` take: 4 characters a token, 4 more a message, 3 to open the reply.

    Example:
        >>> prompt_tokens([{"role": "user", "content": "What is 2 + 3?"}])
        11
    """
    return 3 + sum(TOKENS_PER_MESSAGE + -(-len(str(m.get("content") or "")) // CHARS_PER_TOKEN) for m in messages)


@dataclass(frozen=True)
class Pass:
    """One pass of a run over the server: its requests, their prompt tokens (estimated), completion tokens (at most)."""

    name: str
    requests: int
    prompt_tokens: int
    completion_tokens: int

    def line(self) -> str:
        return (f"{self.name}: {self.requests:,} requests, ~{self.prompt_tokens:,} prompt tokens, "
                f"at most {self.completion_tokens:,} completion tokens")


@dataclass(frozen=True)
class RequestEstimate:
    """What a run still sends: its passes (``responses``, then ``consistency:K`` / ``p_true``), the run's items,
    protocols and samples a prompt, how many prompts an earlier call already answered, and how many responses an LLM
    judge will read on its own server."""

    passes: tuple[Pass, ...]
    items: int
    protocols: tuple[str, ...]
    samples: int = 1
    done: int = 0
    judged: int = 0

    @property
    def prompts(self) -> int:
        return self.items * len(self.protocols)

    @property
    def requests(self) -> int:
        return sum(p.requests for p in self.passes)

    @property
    def prompt_tokens(self) -> int:
        return sum(p.prompt_tokens for p in self.passes)

    @property
    def completion_tokens(self) -> int:
        return sum(p.completion_tokens for p in self.passes)

    def lines(self) -> list[str]:
        """The estimate in words, one line each (what the CLI prints before it asks)."""
        out = [f"{self.items:,} items x {len(self.protocols)} protocol{'s' if len(self.protocols) > 1 else ''} "
               f"({', '.join(self.protocols)}) = {self.prompts:,} prompts, {self.samples} "
               f"sample{'s' if self.samples > 1 else ''} each"]
        sent = [p.line() for p in self.passes if p.requests]
        out += sent
        if len(sent) > 1:
            out.append(Pass("in all", self.requests, self.prompt_tokens, self.completion_tokens).line())
        out.append(f"(prompt tokens estimated at {CHARS_PER_TOKEN} characters a token; completion tokens are "
                   "--max-tokens per request, an upper bound that a reasoning model's hidden reasoning counts in)")
        if self.done:
            out.append(f"{self.done:,} of the {self.prompts:,} prompts were answered by an earlier call: "
                       "not sent again")
        if self.judged:
            out.append(f"the LLM judge reads {self.judged:,} responses on its own server (not counted above)")
        return out


def _rows_in(path: Path) -> dict[tuple[str, str, int], set[str]]:
    """The (item id, protocol, sample) rows of a run file, each with the confidence values it holds; read only (a
    half-written last line is skipped, not cut off: this runs before anything may be written)."""
    rows: dict[tuple[str, str, int], set[str]] = {}
    if not path.exists():
        return rows
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                row = json.loads(line)
                key = (str(row["id"]), str(row.get("protocol") or ""), int(row.get("sample", 0)))
            except (ValueError, KeyError, TypeError):
                continue
            rows[key] = set(row.get("confidence") or {})
    return rows


def estimate_requests(config: EvalConfig, out: str | os.PathLike[str] | None = None) -> RequestEstimate:
    """What the run ``config`` still sends its model's server, with ``out`` its run folder (see the module docstring).

    Nothing is written, nothing is sent: the items and prompts are built as the run builds them.
    """
    prompts = eval_prompts(config)
    folder = Path(out) if out is not None else None
    answered = _rows_in(folder / RESPONSES) if folder is not None else {}
    scored = set(_rows_in(folder / SCORED)) if folder is not None and config.judge.uses_llm else set()
    keys = [[(item.id, protocol, s) for s in range(config.samples)] for protocol, item in prompts.work]
    tokens = [prompt_tokens(m) for m in prompts.messages]
    per_prompt = 1 if config.generation().greedy else config.samples

    size = config.batch_size  # a chunk with a row missing is generated again whole (abstain.evaluation.run)
    chunks = [range(s, min(s + size, len(keys))) for s in range(0, len(keys), size)]
    todo = [i for c in chunks if any(k not in answered for j in c for k in keys[j]) for i in c]
    passes = [Pass("responses", len(todo) * per_prompt, sum(tokens[i] for i in todo) * per_prompt,
                   len(todo) * per_prompt * config.max_tokens)]
    for name in config.confidence:
        needs = estimator_of(name).needs
        if needs not in ("samples", "query"):
            continue
        rows = [(i, k) for i, ks in enumerate(keys) for k in ks if name not in answered.get(k, ())]
        if needs == "samples":  # consistency:K: K more samples of the same prompt per response
            k = samples_of(name)
            passes.append(Pass(name, len(rows) * k, sum(tokens[i] for i, _ in rows) * k,
                               len(rows) * k * config.max_tokens))
        else:  # p_true: the question, the proposed answer (at most a response long) and one generated token
            asked = [prompt_tokens([{"role": "user", "content": p_true_prompt(prompts.work[i][1].question, "")}])
                     + config.max_tokens for i, _ in rows]
            passes.append(Pass(name, len(rows), sum(asked), len(rows)))
    done = len(keys) - len(todo)
    judged = sum(k not in scored for ks in keys for k in ks) if config.judge.uses_llm else 0
    return RequestEstimate(tuple(passes), items=len(prompts.item_set.items), protocols=config.protocols,
                           samples=config.samples, done=done, judged=judged)
