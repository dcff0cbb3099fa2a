"""The five stages of the LLM rewrite pipeline: a prompt builder and a reply handler each.

A handler reads the model's reply (tolerantly: :func:`abstain.synth.llm_prompts.parse_json_reply`),
fills the :class:`Attempt` and returns the reason it rejects the reply, or None. Every reason is kept
in the attempt record, so a run shows where and why each attempt stopped.

Example:
    >>> source = Source("gsm8k-1", "A robe takes 2 bolts of blue fiber and half that much white fiber. "
    ...                 "How many bolts in total does it take?", "3", "2/2=1 ... 2+1=3")
    >>> attempt = Attempt(source.id, 1, "numerical_value_removal")
    >>> handle_reply("decompose", attempt, source, "Sure, it is about fibers.", random.Random(0))
    False
    >>> attempt.reason
    'decompose: no JSON object in the reply'
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from abstain.backends.base import Message
from abstain.synth.llm_prompts import DECOMPOSE, GRAPH, OPERATOR_DEFINITIONS, PERTURB, REWRITE, VALIDATE, parse_json_reply

__all__ = ["STAGES", "Attempt", "Source", "handle_reply", "prompt_for"]

STAGES = ("decompose", "graph", "perturb", "rewrite", "validate")
_NUM = re.compile(r"\d+(?:[.,]\d+)*")
_QUALIFIER = re.compile(r"\b(at least|at most|about|around|roughly|nearly|approximately|some|several|up to|"
                        r"no more than|more than|fewer than|less than|a few|many)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Source:
    """A well-posed source problem with its reference answer and (optional) worked solution."""

    id: str
    question: str
    answer: str
    solution: str = ""


@dataclass
class Attempt:
    """One attempt on one source: what each stage produced and why it stopped."""

    source_id: str
    attempt: int
    operator: str
    stage: str = ""
    accepted: bool = False
    reason: str | None = None
    background: str = ""
    conditions: list[str] = field(default_factory=list)
    question: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    critical: list[str] = field(default_factory=list)
    condition_id: str | None = None
    perturbed_condition: str | None = None
    gap: str | None = None
    problem: str | None = None
    validator: dict[str, Any] | None = None
    replies: dict[str, str] = field(default_factory=dict)

    @property
    def condition(self) -> str | None:
        return self.conditions[int(self.condition_id[1:]) - 1] if self.condition_id else None


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUM.findall(text)}


# ---- stages: a prompt builder and a reply handler each (the handler returns a rejection reason) ----


def _prompt(stage: str, a: Attempt, s: Source) -> list[Message]:
    if stage == "decompose":
        text = DECOMPOSE.format(problem=s.question)
    elif stage == "graph":
        conditions = "\n".join(f"c{i}: {c}" for i, c in enumerate(a.conditions, start=1))
        text = GRAPH.format(conditions=conditions, question=a.question, solution=s.solution or "(not given)")
    elif stage == "perturb":
        text = PERTURB.format(condition=a.condition, operator=a.operator, definition=OPERATOR_DEFINITIONS[a.operator],
                              question=a.question)
    elif stage == "rewrite":
        facts = [a.perturbed_condition if f"c{i}" == a.condition_id else c for i, c in enumerate(a.conditions, 1)]
        text = REWRITE.format(background=a.background or "(none)", facts="\n".join(f"- {f}" for f in facts),
                              question=a.question)
    else:
        text = VALIDATE.format(problem=a.problem)
    return [{"role": "user", "content": text}]


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _decompose(a: Attempt, s: Source, obj: dict[str, Any]) -> str | None:
    raw = obj.get("conditions")
    conditions = [c.strip() for c in raw if isinstance(c, str) and c.strip()] if isinstance(raw, list) else []
    a.background, a.question, a.conditions = _text(obj.get("background")), _text(obj.get("question")), conditions
    if not conditions:
        return "no 'conditions' list"
    if not a.question:
        return "no 'question'"
    source_numbers = _numbers(s.question)
    for i, c in enumerate(conditions, start=1):
        foreign = _numbers(c) - source_numbers
        if foreign:
            return f"condition c{i} has numbers not in the problem: {sorted(foreign)}"
    if not any(_numbers(c) for c in conditions):
        return "no condition states a number"
    return None


def _graph(a: Attempt, s: Source, obj: dict[str, Any], rng: random.Random) -> str | None:
    steps = [st for st in obj.get("steps") or [] if isinstance(st, dict)] if isinstance(obj.get("steps"), list) else []
    if not steps:
        return "no 'steps' list"
    uses: dict[str, list[str]] = {}
    for st in steps:
        sid = _text(st.get("id"))
        refs = [r.strip() for r in st.get("uses") or [] if isinstance(r, str)] if isinstance(st.get("uses"), list) else []
        if not re.fullmatch(r"s\d+", sid) or sid in uses:
            return f"bad or repeated step id {sid!r}"
        uses[sid] = refs
    conditions = {f"c{i}" for i in range(1, len(a.conditions) + 1)}
    for sid, refs in uses.items():
        unknown = [r for r in refs if r not in conditions and r not in uses]
        if unknown:
            return f"step {sid} uses unknown {unknown}"
    answer = _text(obj.get("answer"))
    if answer not in uses:
        return f"the answer step {answer!r} is not a step"
    critical: list[str] = []
    seen: set[str] = set()
    stack: list[tuple[str, tuple[str, ...]]] = [(answer, ())]
    while stack:  # walk back from the answer step; a step met again on its own path is a cycle
        node, path = stack.pop()
        if node in path:
            return f"the graph has a cycle through {node}"
        if node in conditions:
            if node not in critical:
                critical.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.extend((r, (*path, node)) for r in uses[node])
    if not critical:
        return "no condition on the solution path"
    if not any(s.answer in _numbers(_text(st.get("result"))) for st in steps):
        return f"no step reaches the reference answer {s.answer}"
    a.steps, a.critical = steps, sorted(critical, key=lambda c: int(c[1:]))
    a.condition_id = rng.choice(a.critical)
    return None


def _perturb(a: Attempt, s: Source, obj: dict[str, Any]) -> str | None:
    new, gap, old = _text(obj.get("perturbed_condition")), _text(obj.get("gap")), a.condition or ""
    a.perturbed_condition, a.gap = new or None, gap or None
    if not new or not gap:
        return "no 'perturbed_condition' or no 'gap'"
    if new.lower() == old.lower():
        return "the condition was not changed"
    before, after = _numbers(old), _numbers(new)
    if a.operator == "numerical_value_removal" and not before - after:
        return "no number was removed"
    if a.operator == "entity_disruption" and before != after:
        return "an entity disruption must keep the fact's numbers"
    if a.operator == "qualifier_disruption" and not _QUALIFIER.search(new):
        return "no qualifier in the new condition"
    if after - before - _numbers(s.question):
        return "the new condition adds numbers"
    return None


def _rewrite(a: Attempt, s: Source, obj: dict[str, Any]) -> str | None:
    problem = _text(obj.get("problem"))
    a.problem = problem or None
    if not problem:
        return "no 'problem'"
    if problem == s.question:
        return "the rewrite is the source problem"
    if "?" not in problem:
        return "the rewrite asks no question"
    removed = _numbers(a.condition or "") - _numbers(a.perturbed_condition or "")
    kept_elsewhere = set().union(*(_numbers(c) for c in a.conditions if c != a.condition))
    back = (removed - kept_elsewhere) & _numbers(problem)
    if back:
        return f"the rewrite states the removed number(s) {sorted(back)} again"
    return None


def _validate(a: Attempt, s: Source, obj: dict[str, Any]) -> str | None:
    verdict = obj.get("answerable")
    if isinstance(verdict, str) and verdict.strip().lower() in ("true", "false", "yes", "no"):
        verdict = verdict.strip().lower() in ("true", "yes")
    a.validator = {"answerable": verdict, "missing": _text(obj.get("missing"))}
    if not isinstance(verdict, bool):
        return "no true/false 'answerable'"
    if verdict:
        return "the validator judged the rewrite answerable"
    return None


def handle_reply(stage: str, attempt: Attempt, source: Source, reply: str, rng: random.Random) -> bool:
    """Record the model's ``reply`` to ``stage``; False (with ``attempt.reason`` set) when it is rejected."""
    attempt.stage, attempt.replies[stage] = stage, reply
    obj = parse_json_reply(reply)
    if obj is None:
        reason: str | None = "no JSON object in the reply"
    elif stage == "graph":
        reason = _graph(attempt, source, obj, rng)
    else:
        reason = {"decompose": _decompose, "perturb": _perturb, "rewrite": _rewrite, "validate": _validate}[stage](
            attempt, source, obj)
    if reason is not None:
        attempt.reason = f"{stage}: {reason}"
    return reason is None


def prompt_for(stage: str, attempt: Attempt, source: Source) -> list[Message]:
    """The chat prompt of ``stage`` for this attempt (earlier stages must have succeeded)."""
    return _prompt(stage, attempt, source)
