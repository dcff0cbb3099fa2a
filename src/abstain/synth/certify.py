"""Certificates: exact proofs, read from an emitted ``graph``, that a problem is what its label says.

* **answerable** — the equations are consistent and the target is *determined*: its unit vector lies
  in the row space of the equations, so every solution (whatever any free variable is) gives it the
  same value, and that value equals ``answers[0]``. With ``require_all=True`` (synthesised originals)
  every variable must also be a positive integer and the constraints must hold.
* **unanswerable** — the equations are consistent, the target is not determined, and two solutions
  are exhibited that satisfy every equation and every constraint, give every variable a positive
  integer value (word-problem quantities), and give the target different values. The witnesses are
  found on the line ``x0 + t·d`` through a base point ``x0`` (a hint, e.g. the original's values)
  along a null-space direction ``d`` that moves the target; the feasible integers ``t`` form an
  interval computed exactly from the constraints.

Everything is exact (:class:`fractions.Fraction`, :mod:`abstain.synth.exact`). The independent sympy
check that tests run is :mod:`abstain.synth.verify`.

Example:
    >>> graph = {"variables": ["a", "b"], "equations": ["a = b + 3"], "constraints": ["b >= 2"], "target": "a"}
    >>> cert = certify_unanswerable(graph, hint={"a": 5, "b": 2})
    >>> cert.ok, [w["a"] for w in cert.witnesses]
    (True, [5, 6])
    >>> certify_answerable({"variables": ["a"], "equations": ["a = 2*3"], "constraints": [], "target": "a"}, "6").ok
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from abstain.synth.exact import LinearRelation, ReducedSystem, parse_relation, reduce_system

__all__ = ["Certificate", "certify_answerable", "certify_unanswerable"]


@dataclass(frozen=True)
class Certificate:
    """The outcome of a certification; ``reason`` says why it failed."""

    ok: bool
    reason: str = ""
    value: Fraction | None = None
    witnesses: tuple[dict[str, int], ...] = ()

    @classmethod
    def fail(cls, reason: str) -> Certificate:
        return cls(False, reason)


def _parse(graph: Mapping[str, Any]) -> tuple[list[str], list[LinearRelation], list[LinearRelation], str]:
    variables = list(graph["variables"])
    known = set(variables)
    equations = [parse_relation(e) for e in graph["equations"]]
    constraints = [parse_relation(c) for c in graph.get("constraints") or ()]
    for rel, text in zip(equations, graph["equations"]):
        if rel.op != "=":
            raise ValueError(f"equation {text!r} is not an equation")
    for rel in equations + constraints:
        unknown = set(rel.coeffs) - known
        if unknown:
            raise ValueError(f"unknown variables {sorted(unknown)} (not in graph.variables)")
    target = graph["target"]
    if target not in known:
        raise ValueError(f"target {target!r} is not one of the variables")
    return variables, equations, constraints, target


_Solved = tuple[list[str], list[LinearRelation], list[LinearRelation], str, ReducedSystem]


def _solve(graph: Mapping[str, Any]) -> _Solved | Certificate:
    try:
        variables, equations, constraints, target = _parse(graph)
    except (ValueError, KeyError, TypeError) as exc:
        return Certificate.fail(f"malformed graph: {exc}")
    system = reduce_system(equations, order=variables)
    if not system.consistent:
        return Certificate.fail("the equations are inconsistent")
    return variables, equations, constraints, target, system


def certify_answerable(graph: Mapping[str, Any], answer: str, require_all: bool = True) -> Certificate:
    """Prove the target is determined and equals ``answer``."""
    solved = _solve(graph)
    if isinstance(solved, Certificate):
        return solved
    variables, _, constraints, target, system = solved
    if not system.determined(target):
        return Certificate.fail("the target is not determined by the equations")
    value = system.value_of(target)
    try:
        expected = Fraction(str(answer))
    except (ValueError, ZeroDivisionError):
        return Certificate.fail(f"answer {answer!r} is not a number")
    if value != expected:
        return Certificate.fail(f"the equations give {value}, not the stated answer {answer}")
    if require_all:
        free = [v for v in variables if not system.determined(v)]
        if free:
            return Certificate.fail(f"variables {free} are not determined")
        values = {v: system.value_of(v) for v in variables}
        bad = [v for v, x in values.items() if x <= 0 or x.denominator != 1]
        if bad:
            return Certificate.fail(f"variables {bad} are not positive integers")
        if not all(c.holds(values) for c in constraints):
            return Certificate.fail("a constraint does not hold at the solution")
    return Certificate(True, value=value)


def _integer_interval(terms: list[tuple[Fraction, Fraction, str, Fraction]]) -> tuple[float | int, float | int] | None:
    """Integers t with ``s + r*t op rhs`` for every (s, r, op, rhs): (lo, hi) or None if empty."""
    lo: float | int = -math.inf
    hi: float | int = math.inf
    for s, r, op, rhs in terms:
        if r == 0:
            if not LinearRelation({}, op, rhs - s).holds({}):
                return None
            continue
        if r < 0:
            op = {">=": "<=", "<=": ">=", ">": "<", "<": ">", "=": "="}[op]
        num, den = rhs - s, r
        if type(num) is int and type(den) is int:
            floor_q, exact = num // den, num % den == 0
        else:
            q = Fraction(num) / den
            floor_q, exact = math.floor(q), q.denominator == 1
        ceil_q = floor_q if exact else floor_q + 1
        if op in (">=", "="):
            lo = max(lo, ceil_q)
        if op in ("<=", "="):
            hi = min(hi, floor_q)
        if op == ">":
            lo = max(lo, floor_q + 1)
        if op == "<":
            hi = min(hi, ceil_q - 1)
    return (lo, hi) if lo <= hi else None


def _two_nearest(lo: float | int, hi: float | int) -> tuple[int, int] | None:
    """The two integers of [lo, hi] nearest to 0 (0 first when inside)."""
    start = 0 if lo <= 0 <= hi else (int(lo) if lo > 0 else int(hi))
    picks = [start]
    for step in (1, -1, 2, -2):
        cand = start + step
        if lo <= cand <= hi and cand not in picks:
            picks.append(cand)
            break
    return (picks[0], picks[1]) if len(picks) == 2 else None


def certify_unanswerable(graph: Mapping[str, Any], hint: Mapping[str, int] | None = None) -> Certificate:
    """Prove the target is not determined: two positive-integer solutions with different targets."""
    solved = _solve(graph)
    if isinstance(solved, Certificate):
        return solved
    variables, equations, constraints, target, system = solved
    if system.determined(target):
        return Certificate.fail(f"the equations still determine the target ({system.value_of(target)})")
    directions = [d for d in system.null_space(variables) if d.get(target)]
    hint = hint or {}
    free = {v: hint.get(v, 1) for v in variables if v not in system.pivots}
    base = system.solution(variables, free)
    if any(x.denominator != 1 for x in base.values()):
        return Certificate.fail("the base point is not integral")
    for d in directions:
        scale = math.lcm(*(c.denominator for c in d.values()))
        d = {v: c * scale for v, c in d.items()}
        terms = [(base[v], d.get(v, 0), ">=", 1) for v in variables]
        for c in constraints:
            s = sum(k * base[v] for v, k in c.coeffs.items())
            r = sum(k * d.get(v, 0) for v, k in c.coeffs.items())
            terms.append((s, r, c.op, c.rhs))
        interval = _integer_interval(terms)
        picks = _two_nearest(*interval) if interval else None
        if picks is None:
            continue
        witnesses = tuple({v: int(base[v] + t * d.get(v, 0)) for v in variables} for t in picks)
        # belt and braces: re-check the witnesses against the written relations
        for w in witnesses:
            if not all(e.holds(w) for e in equations) or not all(c.holds(w) for c in constraints):
                return Certificate.fail("internal error: a witness does not satisfy the graph")
        return Certificate(True, witnesses=witnesses)
    return Certificate.fail("no two positive-integer solutions satisfy the constraints with different targets")
