"""Exact linear algebra over the rationals, fast enough to certify thousands of problems a second.

The synthesis certificates (:mod:`abstain.synth.certify`) must be exact proofs, and sympy is too slow
for 2,000 pairs/s on one core. This module parses the small linear expressions a problem graph is
written in (``"ben = 3*tom + 5"``, ``"x >= 2*y"``) into sparse rows of :class:`fractions.Fraction`
and reduces a system to reduced row echelon form (Gauss-Jordan elimination, sparse dict rows).
Numbers stay Python ints while they can and become Fractions only when a division is inexact.

From the RREF a caller reads everything it needs: whether the system is consistent, whether a
variable is *determined* (its unit vector lies in the row space — true whatever the other, free,
variables are), a particular solution and a basis of the null space.

Example:
    >>> system = reduce_system([parse_relation("a = 2*b"), parse_relation("b = c + 1"),
    ...                         parse_relation("c = 4")])
    >>> system.consistent, system.determined("a"), system.value_of("a")
    (True, True, 10)
    >>> partial = reduce_system([parse_relation("a = 2*b")])
    >>> partial.determined("a"), partial.null_space(["a", "b"])
    (False, [{'b': 1, 'a': 2}])
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

__all__ = ["LinearRelation", "ReducedSystem", "parse_linear", "parse_relation", "reduce_system"]

Number = int | Fraction
Row = dict[str, Number]


def _div(a: Number, b: Number) -> Number:
    """Exact division that stays an int when it can (ints are ~10x faster than Fractions)."""
    if type(a) is int and type(b) is int:
        q, r = divmod(a, b)
        return q if r == 0 else Fraction(a, b)
    return Fraction(a) / b

_TOKENS = re.compile(r"(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z_0-9]*)|(>=|<=|[-+*/()<>=])|(\S)")
_OPS = (">=", "<=", ">", "<", "=")
_FLIP = {">=": "<=", "<=": ">=", ">": "<", "<": ">", "=": "="}


@dataclass(frozen=True)
class LinearRelation:
    """``sum(coeffs[v] * v) op rhs`` with ``op`` one of ``= >= <= > <``."""

    coeffs: Mapping[str, Number]
    op: str
    rhs: Number

    def holds(self, values: Mapping[str, Number]) -> bool:
        """Whether the relation is true at ``values`` (exactly)."""
        lhs = sum(c * values[v] for v, c in self.coeffs.items())
        return _compare(lhs, self.op, self.rhs)


def _compare(lhs: Number, op: str, rhs: Number) -> bool:
    if op == "=":
        return lhs == rhs
    if op == ">=":
        return lhs >= rhs
    if op == "<=":
        return lhs <= rhs
    if op == ">":
        return lhs > rhs
    return lhs < rhs


class _Parser:
    """Recursive descent over ``expr := term (('+'|'-') term)*``; products need a constant side."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str]] = []
        for number, name, op, junk in _TOKENS.findall(text):
            if junk:
                raise ValueError(f"cannot read {text!r}: unexpected {junk!r}")
            self.tokens.append(("n", number) if number else ("v", name) if name else ("o", op))
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expr(self) -> tuple[Row, Number]:
        coeffs, const = self.term()
        while (tok := self.peek()) is not None and tok in (("o", "+"), ("o", "-")):
            self.take()
            c2, k2 = self.term()
            sign = 1 if tok[1] == "+" else -1
            for v, c in c2.items():
                coeffs[v] = coeffs.get(v, 0) + sign * c
            const += sign * k2
        return {v: c for v, c in coeffs.items() if c}, const

    def term(self) -> tuple[Row, Number]:
        coeffs, const = self.factor()
        while (tok := self.peek()) is not None and tok in (("o", "*"), ("o", "/")):
            self.take()
            c2, k2 = self.factor()
            if tok[1] == "*":
                if coeffs and c2:
                    raise ValueError(f"{self.text!r} is not linear (a product of two variables)")
                if c2:
                    coeffs, const, c2, k2 = c2, k2, coeffs, const
                coeffs = {v: c * k2 for v, c in coeffs.items()}
                const *= k2
            else:
                if c2:
                    raise ValueError(f"{self.text!r} is not linear (division by a variable)")
                if k2 == 0:
                    raise ValueError(f"{self.text!r} divides by zero")
                coeffs = {v: _div(c, k2) for v, c in coeffs.items()}
                const = _div(const, k2)
        return coeffs, const

    def factor(self) -> tuple[Row, Number]:
        tok = self.take() if self.peek() is not None else ("o", "end")
        if tok[0] == "n":
            return {}, (Fraction(tok[1]) if "." in tok[1] else int(tok[1]))
        if tok[0] == "v":
            return {tok[1]: 1}, 0
        if tok == ("o", "-"):
            coeffs, const = self.factor()
            return {v: -c for v, c in coeffs.items()}, -const
        if tok == ("o", "("):
            inner = self.expr()
            if self.peek() != ("o", ")"):
                raise ValueError(f"{self.text!r}: missing ')'")
            self.take()
            return inner
        raise ValueError(f"{self.text!r}: unexpected {tok[1]!r}")


def _parse_flat(tokens: list[tuple[str, str]], text: str) -> tuple[Row, Number]:
    """The same grammar without parentheses, in one loop (the hot path: no recursion)."""
    coeffs: Row = {}
    const: Number = 0
    i, n = 0, len(tokens)
    while i < n:
        sign = 1
        while i < n and tokens[i][0] == "o" and tokens[i][1] in "+-":
            sign = -sign if tokens[i][1] == "-" else sign
            i += 1
        c: Number = sign
        var = None
        op = "*"
        while True:
            if i >= n:
                raise ValueError(f"{text!r}: incomplete expression")
            kind, tok = tokens[i]
            i += 1
            if kind == "n":
                val: Number = Fraction(tok) if "." in tok else int(tok)
                if op == "*":
                    c = c * val
                elif val == 0:
                    raise ValueError(f"{text!r} divides by zero")
                else:
                    c = _div(c, val)
            elif kind == "v":
                if op == "/":
                    raise ValueError(f"{text!r} is not linear (division by a variable)")
                if var is not None:
                    raise ValueError(f"{text!r} is not linear (a product of two variables)")
                var = tok
            else:
                raise ValueError(f"{text!r}: unexpected {tok!r}")
            if i < n and tokens[i][0] == "o" and tokens[i][1] in "*/":
                op = tokens[i][1]
                i += 1
                continue
            break
        if var is None:
            const += c
        else:
            coeffs[var] = coeffs.get(var, 0) + c
        if i < n and not (tokens[i][0] == "o" and tokens[i][1] in "+-"):
            raise ValueError(f"{text!r}: unexpected {tokens[i][1]!r}")
    return {v: _norm(c) for v, c in coeffs.items() if c}, _norm(const)


def _norm(x: Number) -> Number:
    return x.numerator if type(x) is Fraction and x.denominator == 1 else x


def parse_linear(text: str) -> tuple[Row, Number]:
    """``"3*a + b/2 - 4"`` -> ``({'a': 3, 'b': 1/2}, -4)``; raises ValueError when not linear."""
    parser = _Parser(text)
    if ("o", "(") not in parser.tokens:
        if not parser.tokens:
            raise ValueError(f"{text!r}: empty expression")
        return _parse_flat(parser.tokens, text)
    result = parser.expr()
    if parser.peek() is not None:
        raise ValueError(f"{text!r}: unexpected {parser.peek()[1]!r}")  # type: ignore[index]
    return result


@lru_cache(maxsize=8192)
def parse_relation(text: str) -> LinearRelation:
    """``"lhs op rhs"`` (op in ``= >= <= > <``) -> variables on the left, the constant on the right."""
    for op in _OPS:
        if op in text:
            left, _, right = text.partition(op)
            break
    else:
        raise ValueError(f"{text!r} has no relation (=, >=, <=, >, <)")
    if any(o in right for o in ("=", "<", ">")):
        raise ValueError(f"{text!r} has more than one relation sign")
    lc, lk = parse_linear(left)
    rc, rk = parse_linear(right)
    coeffs = dict(lc)
    for v, c in rc.items():
        coeffs[v] = coeffs.get(v, 0) - c
    coeffs = {v: c for v, c in coeffs.items() if c}
    rhs = rk - lk
    fractions = [c.denominator for c in (*coeffs.values(), rhs) if type(c) is Fraction]
    if fractions:  # scale by a positive integer so the row is integral (the relation is unchanged)
        scale = math.lcm(*fractions)
        coeffs = {v: _norm(c * scale) for v, c in coeffs.items()}
        rhs = _norm(rhs * scale)
    return LinearRelation(coeffs, op, rhs)


@dataclass
class ReducedSystem:
    """A system of linear equations in reduced row echelon form (sparse).

    ``pivots[v]`` is the row that expresses pivot variable ``v`` as ``v + sum(c * free) = rhs``.
    """

    pivots: dict[str, tuple[Row, Number]]
    consistent: bool

    def determined(self, var: str) -> bool:
        """True when every solution gives ``var`` the same value (its unit vector is in the row space)."""
        row = self.pivots.get(var)
        return row is not None and len(row[0]) == 1

    def value_of(self, var: str) -> Number:
        """The value of a determined variable."""
        if not self.determined(var):
            raise ValueError(f"{var} is not determined by the equations")
        return self.pivots[var][1]

    def solution(self, variables: Iterable[str], free_values: Mapping[str, Number]) -> dict[str, Number]:
        """The solution with the free variables set to ``free_values`` (missing ones to 0)."""
        out: dict[str, Number] = {}
        for v in variables:
            if v not in self.pivots:
                out[v] = free_values.get(v, 0)
        for v, (row, rhs) in self.pivots.items():
            out[v] = rhs - sum(c * out[f] for f, c in row.items() if f != v)
        return out

    def null_space(self, variables: Sequence[str]) -> list[Row]:
        """A basis of the null space: one vector per free variable (sparse; missing entries are 0)."""
        basis: list[Row] = []
        for free in variables:
            if free in self.pivots:
                continue
            vec: Row = {free: 1}
            for v, (row, _) in self.pivots.items():
                c = row.get(free)
                if c:
                    vec[v] = -c
            basis.append(vec)
        return basis


def _subtract(row: Row, c: Number, other: Row) -> None:
    """``row -= c * other`` in place, dropping coefficients that become 0."""
    for f, oc in other.items():
        nc = row.get(f, 0) - c * oc
        if nc:
            row[f] = nc
        else:
            row.pop(f, None)


def reduce_system(equations: Iterable[LinearRelation], order: Sequence[str] | None = None) -> ReducedSystem:
    """Gauss-Jordan elimination of the equations (``op`` must be ``=``).

    ``order`` ranks the variables for pivot choice (earlier = preferred pivot); by default the order
    in which variables first appear.
    """
    rank: dict[str, int] = {v: i for i, v in enumerate(order)} if order is not None else {}
    pivots: dict[str, tuple[Row, Number]] = {}
    consistent = True
    for eq in equations:
        if eq.op != "=":
            raise ValueError("reduce_system takes equations only; check inequalities separately")
        row = dict(eq.coeffs)
        rhs = eq.rhs
        for v in list(row):
            if v in pivots and v in row:
                c = row[v]
                prow, prhs = pivots[v]
                _subtract(row, c, prow)
                rhs -= c * prhs
        if not row:
            if rhs != 0:
                consistent = False
            continue
        for v in row:
            rank.setdefault(v, len(rank))
        # prefer a unit coefficient as pivot (no fractions), then the variable order
        pivot = min(row, key=lambda v: (abs(row[v]) != 1, rank[v]))
        pc = row[pivot]
        if pc != 1:
            row = {f: _div(c, pc) for f, c in row.items()}
            rhs = _div(rhs, pc)
        # keep the echelon form reduced: remove the new pivot from earlier rows
        for v, (prow, prhs) in list(pivots.items()):
            c = prow.get(pivot)
            if c:
                new = dict(prow)
                _subtract(new, c, row)
                pivots[v] = (new, prhs - c * rhs)
        pivots[pivot] = (row, rhs)
    return ReducedSystem(pivots, consistent)
