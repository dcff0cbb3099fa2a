"""Verifiable reasoning traces read from an item's equation graph.

A graph defines each quantity by one equation ``var = expression`` (:mod:`abstain.synth.graph`
writes them). From the target, the **check** walks breadth first through what the question needs:
each needed quantity is written as its equation in words ("Maya's age = Cara's age - 10.", a given
value "Rosa's age = 26.", a given product computed at once "The price of the blanket = 11 * 43 =
473."), and the first needed quantity that no equation defines is the missing premise, where the
check stops. An answerable problem and its twin therefore share every check line up to the
perturbed quantity. The **solution** then computes the derived quantities in dependency order, each
line a true equation computed exactly ("Cara's age = 26 / 2 = 13."); the **conditional** solution
does the same with the missing quantity as ``x`` ("Maya's age = x - 10.").

Example:
    >>> graph = {"variables": ["rosa", "cara", "maya"],
    ...          "equations": ["rosa = 26", "cara = rosa/2", "maya = cara - 10"], "target": "maya"}
    >>> walk = Walk.of(graph)
    >>> check = walk.check(str.title)
    >>> check.lines, check.missing
    (['Maya = Cara - 10.', 'Cara = Rosa / 2.', 'Rosa = 26.'], None)
    >>> walk.solution(str.title), str(walk.value("maya"))
    (['Cara = 26 / 2 = 13.', 'Maya = 13 - 10 = 3.'], '3')
    >>> twin = Walk.of({**graph, "equations": ["rosa = 26", "maya = cara - 10"]})
    >>> twin.check(str.title).missing, twin.solution(str.title, free="cara"), str(twin.value("maya", free="cara"))
    ('cara', ['Maya = x - 10.'], 'x - 10')
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from abstain.synth.exact import parse_linear
from abstain.train.data.targets.words import capitalize

__all__ = ["Check", "Lin", "Walk", "format_number", "is_literal"]

_TOKEN = re.compile(r"\d+(?:\.\d+)?|[A-Za-z_][A-Za-z_0-9]*|[-+*/()]|\S")
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def format_number(x: Fraction | int) -> str:
    """``Fraction(6, 1)`` -> ``"6"``, ``Fraction(-1, 2)`` -> ``"-1/2"``."""
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


@dataclass(frozen=True)
class Lin:
    """An exact linear form ``a*x + b`` (``a == 0``: a number)."""

    a: Fraction
    b: Fraction

    @classmethod
    def const(cls, b: Fraction | int) -> Lin:
        return cls(Fraction(0), Fraction(b))

    @property
    def is_number(self) -> bool:
        return self.a == 0

    def __str__(self) -> str:
        if self.a == 0:
            return format_number(self.b)
        den = math.lcm(self.a.denominator, self.b.denominator)
        a, b = self.a * den, self.b * den  # integers now
        coeff = "x" if a == 1 else "-x" if a == -1 else f"{format_number(a)}x"
        body = coeff if b == 0 else f"{coeff} {'+' if b > 0 else '-'} {format_number(abs(b))}"
        if den == 1:
            return body
        return f"{body}/{den}" if b == 0 else f"({body})/{den}"

    def operand(self) -> str:
        """The form as an operand of a larger expression (parenthesized unless atomic)."""
        text = str(self)
        number = self.a == 0 and self.b >= 0 and self.b.denominator == 1
        monomial = self.b == 0 and self.a > 0 and self.a.denominator == 1  # x, 4x
        return text if number or monomial else f"({text})"


@dataclass
class Check:
    """The check of what a question needs: one line per needed quantity, and the missing one (if any)."""

    lines: list[str]
    missing: str | None


@dataclass
class Walk:
    """The definitions of a graph, walked from its target."""

    defs: dict[str, str]  # variable -> the expression that defines it
    target: str
    _cache: dict[tuple[str, str | None], Lin] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, graph: Mapping[str, Any]) -> Walk:
        """Read ``graph`` (``equations`` each ``var = expression``, ``target``); ValueError names a bad equation."""
        defs: dict[str, str] = {}
        for eq in graph.get("equations") or ():
            left, sep, right = str(eq).partition("=")
            var = left.strip()
            if not sep or not _NAME.fullmatch(var) or any(c in right for c in "=<>"):
                raise ValueError(f"equation {eq!r} is not of the form 'quantity = expression'")
            if var in defs:
                raise ValueError(f"{var} is defined twice ({defs[var]!r} and {right.strip()!r})")
            if var in _NAME.findall(right):
                raise ValueError(f"equation {eq!r} defines {var} by itself")
            parse_linear(right)  # raises ValueError when it is not linear
            defs[var] = right.strip()
        target = graph.get("target")
        if not isinstance(target, str) or not target:
            raise ValueError("the graph has no target")
        return cls(defs, target)

    def parents(self, var: str) -> list[str]:
        """Quantities the definition of ``var`` refers to, in the order it names them."""
        out: list[str] = []
        for name in _NAME.findall(self.defs.get(var, "")):
            if name not in out:
                out.append(name)
        return out

    def needed(self) -> list[str]:
        """Every quantity the target depends on (the target first, breadth first)."""
        order, queue = [], [self.target]
        while queue:
            var = queue.pop(0)
            if var not in order:
                order.append(var)
                queue.extend(self.parents(var))
        return order

    def _in_words(self, expr: str, noun: Callable[[str], str], values: Mapping[str, Lin] | None = None) -> str:
        parts = []
        for tok in _TOKEN.findall(expr):
            if _NAME.fullmatch(tok):
                parts.append(values[tok].operand() if values is not None else noun(tok))
            elif tok in "+-*/":
                parts.append(f" {tok} ")
            else:
                parts.append(tok)
        return "".join(parts).replace("( ", "(").replace(" )", ")")

    def check(self, noun: Callable[[str], str], missing: Callable[[str], str] | None = None,
              quotes: Mapping[str, str] | None = None) -> Check:
        """Check lines from the target down; stop at the first needed quantity without a definition.

        ``missing(var)`` writes the line of an undefined quantity (default ``"<noun> = unknown."``);
        ``quotes`` maps a quantity to the sentence stating it, written (in quotes) before its equation.
        """
        lines: list[str] = []
        for var in self.needed():  # breadth first; an undefined quantity has no parents, so it ends the walk here
            if var not in self.defs:
                lines.append(missing(var) if missing else capitalize(f"{noun(var)} = unknown."))
                return Check(lines, var)
            expr = self.defs[var]
            words = self._in_words(expr, noun)
            if not self.parents(var) and not is_literal(expr):  # a given product: compute it at once
                words += f" = {self.value(var)}"
            said = f'"{quotes[var]}" ' if quotes and var in quotes else ""
            lines.append(said + capitalize(f"{noun(var)} = {words}."))
        return Check(lines, None)

    def value(self, var: str, free: str | None = None) -> Lin:
        """The exact value of ``var``, as a form in ``x`` when ``free`` (the missing quantity) is set."""
        key = (var, free)
        if key not in self._cache:
            if var == free:
                result = Lin(Fraction(1), Fraction(0))
            elif var not in self.defs:
                raise ValueError(f"{var} is not defined by the graph" + (f" (free: {free})" if free else ""))
            else:
                coeffs, const = parse_linear(self.defs[var])
                a, b = Fraction(0), Fraction(const)
                for name, c in coeffs.items():
                    v = self.value(name, free)
                    a += c * v.a
                    b += c * v.b
                result = Lin(a, b)
            self._cache[key] = result
        return self._cache[key]

    def order(self, free: str | None = None) -> list[str]:
        """The target's dependencies in computation order (each after what it needs)."""
        out: list[str] = []

        def visit(var: str, path: tuple[str, ...]) -> None:
            if var in out:
                return
            if var in path:
                raise ValueError(f"the graph's definitions are circular at {var}")
            if var != free:
                for p in self.parents(var):
                    visit(p, (*path, var))
            out.append(var)

        visit(self.target, ())
        return out

    def solution(self, noun: Callable[[str], str], free: str | None = None) -> list[str]:
        """One line per derived quantity, in computation order: ``noun = expression = value.``.

        Given values (no parents) were written by the check and are skipped; with ``free`` the missing
        quantity is ``x`` and lines that do not simplify further are written once ("= x - 10").
        """
        lines = []
        for var in self.order(free):
            if var == free or not self.parents(var):
                continue
            values = {p: self.value(p, free) for p in self.parents(var)}
            substituted = self._in_words(self.defs[var], noun, values)
            result = str(self.value(var, free))
            same = substituted.replace(" ", "") == result.replace(" ", "")
            lines.append(capitalize(f"{noun(var)} = {result if same else f'{substituted} = {result}'}."))
        return lines

    def given_numbers(self) -> list[Fraction]:
        """The numbers written in the definitions the target needs."""
        nums = []
        for var in self.needed():
            nums += [Fraction(t) for t in re.findall(r"\d+(?:\.\d+)?", self.defs.get(var, ""))]
        return nums


def is_literal(expr: str) -> bool:
    """A bare number (``"12"``, ``"2.5"``): a given value, not a relation."""
    return re.fullmatch(r"\s*\d+(?:\.\d+)?\s*", expr) is not None
