"""An independent sympy check of a synthesised item, reading nothing but what the item says.

It shares no code with the generator's fast certificates (:mod:`abstain.synth.certify`): the graph's
strings are parsed by sympy, the equations are solved with ``linsolve`` and the inequalities with
``solveset``. Use it to audit any file that carries ``graph`` (the tests run it over every emitted row)
— it is also the baseline that ``bench/bench_synth.py`` measures the fast path against.

* **answerable**: every relation is linear; ``linsolve`` gives a non-empty solution set in which the
  target's expression has no free symbol (determined even where other variables are free), equal to
  ``answers[0]``.
* **unanswerable**: the target's expression depends on a free parameter; with one parameter, the
  constraints and the positivity of every quantity leave an interval of positive length, so
  infinitely many real solutions give the target different values. Witnesses stored in
  ``meta.witnesses`` (positive integers) are substituted into every equation and constraint and must
  give two different target values.

Example:
    >>> item = {"label": "unanswerable", "answers": [], "graph": {"variables": ["a", "b"],
    ...         "equations": ["a = b + 3"], "constraints": ["b >= 2"], "target": "a"}}
    >>> verify_item(item)
    []
    >>> item["graph"]["constraints"] = ["b >= 2", "b <= 2"]
    >>> verify_item(item)
    ['the constraints and positivity leave no interval for the free parameter b: {2}']
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import sympy
from sympy.parsing.sympy_parser import parse_expr

__all__ = ["verify_graph", "verify_item"]


def _parse(text: str, symbols: Mapping[str, sympy.Symbol]) -> Any:
    return _parse_cached(text, tuple(sorted(symbols)))


@lru_cache(maxsize=4096)
def _parse_cached(text: str, names: tuple[str, ...]) -> Any:
    return parse_expr(text, local_dict={n: sympy.Symbol(n) for n in names}, evaluate=True)


def _equation(text: str, symbols: Mapping[str, sympy.Symbol]) -> Any:
    """``"lhs = rhs"`` -> the expression ``lhs - rhs`` (zero on solutions)."""
    if text.count("=") != 1 or any(op in text for op in ("<", ">")):
        raise ValueError(f"{text!r} is not of the form 'lhs = rhs'")
    lhs, rhs = text.split("=")
    return sympy.expand(_parse(lhs, symbols) - _parse(rhs, symbols))


def _is_linear(expr: Any, symbols: list[sympy.Symbol]) -> bool:
    poly = sympy.Poly(expr, *symbols) if symbols else None
    return poly is None or poly.total_degree() <= 1


_UPPER = (sympy.LessThan, sympy.StrictLessThan)
_STRICT = (sympy.StrictLessThan, sympy.StrictGreaterThan)


def _solve_linear(cond: Any, t: sympy.Symbol) -> sympy.Set:
    """The real solution set of a linear inequality in ``t`` (``solveset`` is ~20x slower)."""
    if not isinstance(cond, _UPPER + (sympy.GreaterThan, sympy.StrictGreaterThan)):
        return sympy.solveset(cond, t, sympy.S.Reals)
    expr = sympy.expand(cond.lhs - cond.rhs)
    a, b = expr.coeff(t, 1), expr.subs(t, 0)
    if expr != a * t + b or a.free_symbols or b.free_symbols:
        return sympy.solveset(cond, t, sympy.S.Reals)
    if a == 0:
        return sympy.S.Reals if type(cond)(b, 0) is sympy.true else sympy.S.EmptySet
    bound, upper = -b / a, isinstance(cond, _UPPER) != bool(a < 0)
    strict = isinstance(cond, _STRICT)
    if upper:
        return sympy.Interval(-sympy.oo, bound, right_open=strict)
    return sympy.Interval(bound, sympy.oo, left_open=strict)


def verify_graph(graph: Mapping[str, Any], label: str, answers: list[str],
                 witnesses: list[Mapping[str, int]] | None = None) -> list[str]:
    """Problems found (empty when the graph proves the label)."""
    names = list(graph["variables"])
    symbols = {n: sympy.Symbol(n) for n in names}
    ordered = [symbols[n] for n in names]
    try:
        equations = [_equation(e, symbols) for e in graph["equations"]]
        constraints = [_parse(c, symbols) for c in graph.get("constraints") or []]
    except (SyntaxError, TypeError, ValueError) as exc:
        return [f"unreadable graph: {exc}"]
    problems: list[str] = []
    for eq in equations:
        if not _is_linear(eq, ordered):
            problems.append(f"not linear: {eq} = 0")
    for c in constraints:
        if not isinstance(c, sympy.core.relational.Relational):
            problems.append(f"not an inequality: {c}")
        elif not _is_linear(c.lhs - c.rhs, ordered):
            problems.append(f"not linear: {c}")
    stray = set().union(*(e.free_symbols for e in equations + constraints)) - set(ordered) if equations else set()
    if stray:
        problems.append(f"symbols not in variables: {sorted(map(str, stray))}")
    if graph["target"] not in symbols:
        return problems + [f"target {graph['target']!r} is not a variable"]
    if problems:
        return problems
    solutions = sympy.linsolve(equations, ordered)
    if solutions == sympy.EmptySet:
        return ["the equations have no solution"]
    (solution,) = solutions
    values = dict(zip(ordered, solution))
    target_expr = values[symbols[graph["target"]]]
    if label == "answerable":
        if target_expr.free_symbols:
            return [f"the target is not determined: {graph['target']} = {target_expr}"]
        try:
            stated = sympy.Rational(answers[0]) if answers else None
        except (TypeError, ValueError):
            stated = None
        if stated is None or stated != target_expr:
            return [f"the equations give {target_expr}, the item says {answers[:1]}"]
        return []
    if not target_expr.free_symbols:
        return [f"the target is determined ({target_expr}) but the item is unanswerable"]
    params = sorted(set().union(*(v.free_symbols for v in values.values())), key=str)
    if len(params) == 1:
        (t,) = params
        feasible = sympy.Interval(-sympy.oo, sympy.oo)
        conditions = [c.subs(values) for c in constraints] + [sympy.StrictGreaterThan(v, 0) for v in values.values()]
        for cond in conditions:
            if cond is sympy.true:
                continue
            if cond is sympy.false:
                return [f"a constraint or positivity fails for every solution: {cond}"]
            feasible = feasible.intersect(_solve_linear(cond, t))
        if feasible.is_empty or feasible.measure == 0:
            return [f"the constraints and positivity leave no interval for the free parameter {t}: {feasible}"]
    elif not witnesses:
        return [f"{len(params)} free parameters and no witnesses to check"]
    if witnesses:
        targets = set()
        for w in witnesses:
            point = {symbols[k]: sympy.Integer(v) for k, v in w.items() if k in symbols}
            if set(point) != set(ordered):
                problems.append(f"witness {dict(w)} does not give every variable")
                continue
            if any(v <= 0 for v in point.values()):
                problems.append(f"witness {dict(w)} has a non-positive quantity")
            for eq in equations:
                if eq.subs(point) != 0:
                    problems.append(f"witness {dict(w)} violates {eq} = 0")
            for rel in constraints:
                if rel.subs(point) is not sympy.true:
                    problems.append(f"witness {dict(w)} violates {rel}")
            targets.add(point[symbols[graph["target"]]])
        if len(targets) < 2:
            problems.append("the witnesses do not give two different target values")
    return problems


def verify_item(item: Mapping[str, Any] | Any) -> list[str]:
    """Problems with a synthesised item (a dict or an :class:`abstain.schema.Item`); [] when valid."""
    data = item if isinstance(item, Mapping) else item.model_dump()
    graph = data.get("graph")
    if not graph:
        return ["no graph"]
    witnesses = (data.get("meta") or {}).get("witnesses")
    return verify_graph(graph, data["label"], list(data.get("answers") or []), witnesses)
