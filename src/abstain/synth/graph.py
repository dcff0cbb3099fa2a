"""Problem graphs: a DAG of quantities, each defined by one fact over its parents.

A :class:`Fact` defines one variable: a given value (``tom = 12``), a value written as a product
(``monday = 3*40``: three hours at 40 km/h), or a relation to earlier variables — ``more``
(``ben = tom + 5``), ``less``, ``times`` (``cara = 3*ben``), ``part`` (``dan = cara/2``) and ``sum``
(``eve = tom + ben``). Coefficients are small positive integers, so the target grows with every
ancestor and no perturbation of a condition on its path can cancel out.

:func:`build_graph` draws a chain of ``depth`` facts ending at the target, side values that sums pull
in, and distractor facts off the path; every value is a positive integer and every number written in
the text is distinct (so a test can check that a removed number is gone).

Example:
    >>> import random
    >>> g = build_graph(random.Random(0), GraphSpec(depth=3), ["tom", "ben", "cara", "dan", "eve", "fay"])
    >>> g.depth_of(g.target)
    3
    >>> all(v > 0 for v in g.values.values())
    True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

__all__ = ["RELATIONS", "Fact", "GraphSpec", "ProblemGraph", "build_graph"]

#: fact kinds that relate a variable to other variables (the rest give a value)
RELATIONS = ("more", "less", "times", "part", "sum")


@dataclass(frozen=True)
class Fact:
    """One condition of a problem: it defines ``var``.

    ``k`` is the value (``value``), the first factor (``rate``), the offset (``more``/``less``) or the
    factor (``times``/``part``); ``m`` is the second factor of a ``rate``.
    """

    kind: str
    var: str
    parents: tuple[str, ...] = ()
    k: int = 0
    m: int = 0

    @property
    def is_relation(self) -> bool:
        return self.kind in RELATIONS

    def equation(self, var: str | None = None) -> str:
        """The fact as ``"lhs = rhs"`` (``var`` renames the defined variable)."""
        v, p, kind = var or self.var, self.parents, self.kind
        if kind == "value":
            rhs = f"{self.k}"
        elif kind == "rate":
            rhs = f"{self.k}*{self.m}"
        elif kind == "more":
            rhs = f"{p[0]} + {self.k}"
        elif kind == "less":
            rhs = f"{p[0]} - {self.k}"
        elif kind == "times":
            rhs = f"{self.k}*{p[0]}"
        elif kind == "part":
            rhs = f"{p[0]}/{self.k}"
        elif kind == "sum":
            rhs = " + ".join(p)
        else:
            raise ValueError(f"unknown fact kind {kind!r}")
        return f"{v} = {rhs}"

    def evaluate(self, values: dict[str, int]) -> int:
        p = [values[x] for x in self.parents]
        if self.kind == "value":
            return self.k
        if self.kind == "rate":
            return self.k * self.m
        if self.kind == "more":
            return p[0] + self.k
        if self.kind == "less":
            return p[0] - self.k
        if self.kind == "times":
            return self.k * p[0]
        if self.kind == "part":
            return p[0] // self.k
        return sum(p)

    def numbers(self) -> tuple[int, ...]:
        """Numbers the text writes in digits (multipliers of times/part are words or digits by render)."""
        if self.kind == "value":
            return (self.k,)
        if self.kind == "rate":
            return (self.k, self.m)
        if self.kind in ("more", "less"):
            return (self.k,)
        return ()


@dataclass(frozen=True)
class GraphSpec:
    """How a graph is drawn.

    Attributes:
        depth: facts on the longest chain from a given value to the target (>= 1).
        distractors: facts off the target's path.
        value_range: range of given values (inclusive).
        offset_range: range of ``more``/``less`` offsets.
        factors: multipliers of ``times`` and divisors of ``part``.
        max_value: no quantity may exceed it.
        sum_prob: chance that a chain step is a sum with another quantity.
        rate_prob: chance that a given value is written as a product (if the theme has such a sentence).
        kinds: relation kinds to draw from.
    """

    depth: int = 3
    distractors: int = 1
    value_range: tuple[int, int] = (3, 40)
    offset_range: tuple[int, int] = (2, 19)
    factors: tuple[int, ...] = (2, 3, 4)
    max_value: int = 400
    sum_prob: float = 0.25
    rate_prob: float = 0.3
    kinds: tuple[str, ...] = ("more", "less", "times", "part", "sum")
    rate_factors: tuple[tuple[int, int], tuple[int, int]] = ((2, 9), (3, 20))

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise ValueError("depth must be >= 1")
        if self.value_range[0] < 1 or self.value_range[0] > self.value_range[1]:
            raise ValueError("value_range must be (lo, hi) with 1 <= lo <= hi")


@dataclass
class ProblemGraph:
    """Variables (by name), one fact per variable, their values and the target."""

    facts: dict[str, Fact]
    values: dict[str, int]
    target: str
    entities: dict[str, str] = field(default_factory=dict)  # variable -> entity key

    @property
    def variables(self) -> list[str]:
        return list(self.facts)

    def ancestors(self, var: str) -> list[str]:
        """``var`` and every variable it depends on, nearest first."""
        out, stack = [], [var]
        while stack:
            v = stack.pop(0)
            if v not in out:
                out.append(v)
                stack.extend(self.facts[v].parents)
        return out

    def depth_of(self, var: str) -> int:
        fact = self.facts[var]
        return 1 + max((self.depth_of(p) for p in fact.parents), default=0)

    def equations(self) -> list[str]:
        return [f.equation() for f in self.facts.values()]

    def numbers(self) -> list[int]:
        return [n for f in self.facts.values() for n in f.numbers()]


class _Draw:
    """Draws facts with fresh numbers (no number written twice in one problem)."""

    def __init__(self, rng: random.Random, spec: GraphSpec) -> None:
        self.rng, self.spec = rng, spec
        self.used: set[int] = set()

    def number(self, lo: int, hi: int) -> int | None:
        choices = [n for n in range(lo, hi + 1) if n not in self.used] if hi - lo < 64 else None
        if choices is not None:
            if not choices:
                return None
            n = self.rng.choice(choices)
        else:
            for _ in range(32):
                n = self.rng.randint(lo, hi)
                if n not in self.used:
                    break
            else:
                return None
        self.used.add(n)
        return n

    def value_fact(self, var: str, allow_rate: bool) -> Fact:
        spec = self.spec
        if allow_rate and self.rng.random() < spec.rate_prob:
            (alo, ahi), (blo, bhi) = spec.rate_factors
            a, b = self.number(alo, ahi), self.number(blo, bhi)
            if a is not None and b is not None and a * b <= spec.max_value:
                return Fact("rate", var, k=a, m=b)
        n = self.number(*spec.value_range)
        if n is None:
            raise _Retry
        return Fact("value", var, k=n)

    def relation(self, var: str, parent: str, values: dict[str, int], other: str | None) -> Fact | None:
        """A relation defining ``var`` from ``parent`` (and ``other`` for a sum), or None."""
        spec, x = self.spec, values[parent]
        kinds = [k for k in spec.kinds if k != "sum" or other is not None]
        self.rng.shuffle(kinds)
        for kind in kinds:
            if kind == "sum" and other is not None:
                if x + values[other] <= spec.max_value:
                    parents = (parent, other) if self.rng.random() < 0.5 else (other, parent)
                    return Fact("sum", var, parents)
            elif kind == "more":
                k = self.number(spec.offset_range[0], min(spec.offset_range[1], spec.max_value - x))
                if k is not None:
                    return Fact("more", var, (parent,), k=k)
            elif kind == "less" and x > spec.offset_range[0] + 1:
                k = self.number(spec.offset_range[0], min(spec.offset_range[1], x - 1))
                if k is not None:
                    return Fact("less", var, (parent,), k=k)
            elif kind == "times":
                ok = [f for f in spec.factors if f * x <= spec.max_value]
                if ok:
                    return Fact("times", var, (parent,), k=self.rng.choice(ok))
            elif kind == "part":
                ok = [f for f in spec.factors if x % f == 0 and x // f > 0]
                if ok:
                    return Fact("part", var, (parent,), k=self.rng.choice(ok))
        return None


class _Retry(Exception):
    """The draw painted itself into a corner; start the graph again."""


def build_graph(rng: random.Random, spec: GraphSpec, names: Sequence[str], allow_rate: bool = True) -> ProblemGraph:
    """Draw a problem graph over variable ``names`` (at least ``spec.depth + spec.distractors + 1``).

    The first ``depth`` facts form the chain to the target; sums pull in a side value (a new
    variable) or an earlier chain variable; distractors hang off any variable but feed nothing the
    target needs.
    """
    for _ in range(64):
        try:
            return _build(rng, spec, list(names), allow_rate)
        except _Retry:
            continue
    raise RuntimeError(f"could not draw a graph for {spec}")


def _build(rng: random.Random, spec: GraphSpec, names: list[str], allow_rate: bool) -> ProblemGraph:
    draw = _Draw(rng, spec)
    pool = list(names)
    facts: dict[str, Fact] = {}
    values: dict[str, int] = {}

    def add(fact: Fact) -> None:
        facts[fact.var] = fact
        values[fact.var] = fact.evaluate(values)
        if values[fact.var] <= 0 or values[fact.var] > spec.max_value:
            raise _Retry

    def fresh() -> str:
        if not pool:
            raise _Retry  # too few names for this draw (sums pulled in side values): draw again
        return pool.pop(0)

    chain = [fresh()]
    add(draw.value_fact(chain[0], allow_rate))
    while len(chain) < spec.depth:
        var = fresh()
        other = None
        if spec.depth > 1 and rng.random() < spec.sum_prob and "sum" in spec.kinds:
            if len(chain) >= 2 and rng.random() < 0.4:
                other = rng.choice(chain[:-1])
            elif pool:
                other = fresh()
                add(draw.value_fact(other, allow_rate))
        fact = draw.relation(var, chain[-1], values, other)
        if fact is None:
            raise _Retry
        add(fact)  # a side value drawn for a sum that did not fit stays as a distractor
        chain.append(var)
    target = chain[-1]
    graph = ProblemGraph(facts, values, target)
    if graph.depth_of(target) != spec.depth:
        raise _Retry
    for _ in range(spec.distractors):
        var = fresh()
        if rng.random() < 0.35:
            add(draw.value_fact(var, allow_rate))
            continue
        base = rng.choice(list(facts))
        other = rng.choice([v for v in facts if v != base]) if len(facts) > 1 else None
        fact = draw.relation(var, base, values, other if rng.random() < 0.3 else None)
        add(fact if fact is not None else draw.value_fact(var, allow_rate))
    # distractors never feed the target: they are defined last, so nothing on the path reads them
    return graph


def renamed(graph: ProblemGraph, names: dict[str, str]) -> ProblemGraph:
    """The graph with variables renamed (``names`` maps old -> new)."""
    facts = {
        names[v]: replace(f, var=names[v], parents=tuple(names[p] for p in f.parents)) for v, f in graph.facts.items()
    }
    values = {names[v]: x for v, x in graph.values.items()}
    return ProblemGraph(facts, values, names[graph.target], {names[v]: e for v, e in graph.entities.items()})
