"""ACA-RL's six condition perturbations (Table 8), applied to a critical condition of a problem graph.

A *critical condition* is a fact on the target's solution path (the target's own fact or one of its
ancestors'). Every operator turns that fact into a sentence that still reads like a complete problem
and records exactly what changed in the graph: the equation removed, the equation added (entity
disruption), the inequalities left behind (``constraints``), the gap in words and the variable it
concerns.

==========================================  ============================================================
operator                                    what happens to the fact defining ``v``
==========================================  ============================================================
``numerical_value_removal``                 a given value (or one factor of a product) is dropped:
                                            "Tom has some marbles."; ``v`` becomes free
``relationship_removal``                    a relation is dropped: "Ben also collects marbles."
``relationship_unquantifiable_replacement`` "5 more than" -> "more than" (``v > p``), "3 times" -> "a
                                            few times" (``v >= 2*p``), sums -> "more than ... combined"
``entity_disruption``                       the same fact is stated about another entity (a new
                                            variable); ``v`` is no longer defined
``qualifier_disruption``                    "at least 12" (``v >= 12``), "about 12" (a band), "no more
                                            than 12", "some of the 12"; "at least 5 more than"
``condition_contraction``                   the fact covers only part of the set: "12 of Tom's marbles
                                            are from last summer" (``v >= 12``)
==========================================  ============================================================

Example:
    >>> OPERATORS[0], len(OPERATORS)
    ('numerical_value_removal', 6)
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from abstain.synth.graph import RELATIONS, Fact, ProblemGraph
from abstain.synth.render import Voice
from abstain.synth.themes import times_word

__all__ = ["OPERATORS", "Perturbation", "candidates", "perturb"]

OPERATORS = (
    "numerical_value_removal",
    "relationship_removal",
    "relationship_unquantifiable_replacement",
    "entity_disruption",
    "qualifier_disruption",
    "condition_contraction",
)

_VALUE_QUALIFIERS = ("at_least", "about", "at_most", "some_of")


@dataclass(frozen=True)
class Perturbation:
    """What one operator did to one fact."""

    operator: str
    var: str  # the gap variable: the quantity whose defining fact was perturbed
    form: str  # which variant: mention, rate_no_n, unq_more, at_least, contract, entity, ...
    sentence: str  # the sentence that replaces the fact's sentence in the twin
    original: str  # the fact's sentence in the original
    removed: str  # the original equation that the twin no longer has
    added: tuple[str, ...] = ()  # equations the twin gains (entity disruption)
    constraints: tuple[str, ...] = ()
    new_variables: tuple[str, ...] = ()
    new_values: tuple[tuple[str, int], ...] = ()
    gap: str = ""
    removed_numbers: tuple[int, ...] = ()


def candidates(operator: str, graph: ProblemGraph, voice: Voice) -> list[tuple[str, str]]:
    """(variable, form) pairs on the target's path that ``operator`` can perturb in this theme."""
    theme = voice.theme
    out: list[tuple[str, str]] = []
    for var in graph.ancestors(graph.target):
        fact = graph.facts[var]
        kind = fact.kind
        if operator == "numerical_value_removal":
            if kind == "value" and theme.has("mention"):
                out.append((var, "mention"))
            elif kind == "rate":
                out += [(var, form) for form in ("rate_no_n", "rate_no_m") if theme.has(form)]
        elif operator == "relationship_removal":
            if kind in RELATIONS and theme.has("mention"):
                out.append((var, "mention"))
        elif operator == "relationship_unquantifiable_replacement":
            if kind in RELATIONS and theme.has(f"unq_{kind}"):
                out.append((var, f"unq_{kind}"))
        elif operator == "entity_disruption":
            out.append((var, "entity"))
        elif operator == "qualifier_disruption":
            if kind == "value":
                out += [(var, q) for q in _VALUE_QUALIFIERS if theme.has(f"qual_{q}")
                        and (q != "some_of" or fact.k >= 3)]
            elif kind in ("more", "less", "times") and theme.has(f"qual_{kind}"):
                out.append((var, f"qual_{kind}"))
        elif operator == "condition_contraction":
            if kind == "value" and theme.has("contract"):
                out.append((var, "contract"))
            elif kind == "sum" and theme.has("contract_sum"):
                out.append((var, "contract_sum"))
        else:
            raise ValueError(f"unknown perturbation {operator!r}; choose one of {OPERATORS}")
    return out


def _about_band(n: int) -> int:
    return max(1, round(n / 10))


def perturb(operator: str, graph: ProblemGraph, voice: Voice, display: Mapping[str, str], var: str, form: str,
            fresh: tuple[str, str] | None = None) -> Perturbation:
    """Apply ``operator`` in ``form`` to the fact defining ``var``.

    ``fresh`` is (variable name, display name) of an entity not in the problem, for entity disruption.
    """
    fact: Fact = graph.facts[var]
    original = voice.fact_sentence(fact, display)
    removed = fact.equation()
    p = list(fact.parents)
    noun = lambda v: voice.phrase("noun", a=display[v])  # noqa: E731
    ask = voice.phrase("ask", a=display[var])
    base = {"operator": operator, "var": var, "form": form, "original": original, "removed": removed}

    if operator in ("numerical_value_removal", "relationship_removal"):
        if form == "mention":
            sentence = voice.say("mention", var, a=display[var])
            if operator == "numerical_value_removal":
                gap = f"The problem never states {ask}."
            elif fact.kind == "sum":
                gap = f"The problem never states the relation between {noun(var)} and the total of {noun(p[0])} and {noun(p[1])}."
            else:
                gap = f"The problem never states the relation between {noun(var)} and {noun(p[0])}."
            return Perturbation(**base, sentence=sentence, gap=gap, removed_numbers=fact.numbers())
        dropped = fact.k if form == "rate_no_n" else fact.m
        sentence = voice.fact_sentence(fact, display, kind=form)
        missing = voice.phrase("ask_rate_n" if form == "rate_no_n" else "ask_rate_m", a=display[var])
        return Perturbation(**base, sentence=sentence, gap=f"The problem never states {missing}.",
                            removed_numbers=(dropped,))

    if operator == "relationship_unquantifiable_replacement":
        sentence = voice.fact_sentence(fact, display, kind=form)
        if fact.kind == "sum":
            constraint = f"{var} > {p[0]} + {p[1]}"
            gap = f"The exact difference between {noun(var)} and the total of {noun(p[0])} and {noun(p[1])} is missing."
        else:
            constraint = {"more": f"{var} > {p[0]}", "less": f"{var} < {p[0]}", "times": f"{var} >= 2*{p[0]}",
                          "part": f"{var} < {p[0]}"}[fact.kind]
            what = "difference" if fact.kind in ("more", "less") else "ratio"
            gap = f"The exact {what} between {noun(var)} and {noun(p[0])} is missing."
        return Perturbation(**base, sentence=sentence, constraints=(constraint,), gap=gap,
                            removed_numbers=fact.numbers())

    if operator == "entity_disruption":
        if fresh is None:
            raise ValueError("entity_disruption needs a fresh entity")
        new_var, new_name = fresh
        shown = {**display, new_var: new_name}
        sentence = voice.fact_sentence(fact, shown, var=new_var)
        gap = (f"The problem gives that fact for {voice.phrase('noun', a=new_name)}, not for {noun(var)}, "
               f"so it never states {ask}.")
        return Perturbation(**base, sentence=sentence, added=(fact.equation(var=new_var),),
                            new_variables=(new_var,), new_values=((new_var, graph.values[var]),), gap=gap)

    if operator == "qualifier_disruption":
        if fact.kind == "value":
            n = fact.k
            sentence = voice.say(f"qual_{form}", var, a=display[var], n=n)
            if form == "about":
                w = _about_band(n)
                constraints: tuple[str, ...] = (f"{var} >= {n - w}", f"{var} <= {n + w}")
                bound = "an approximate value"
            else:
                constraints = ({"at_least": f"{var} >= {n}", "at_most": f"{var} <= {n}",
                                "some_of": f"{var} < {n}"}[form],)
                bound = "a lower bound" if form == "at_least" else "an upper bound"
            gap = f"The problem gives only {bound} for {noun(var)}, not its exact value."
            return Perturbation(**base, sentence=sentence, constraints=constraints, gap=gap)
        sentence = voice.say(form, var, a=display[var], b=display[p[0]], n=fact.k,
                             x=times_word(fact.k) if fact.kind == "times" else "")
        constraint = {"more": f"{var} >= {p[0]} + {fact.k}", "less": f"{var} <= {p[0]} - {fact.k}",
                      "times": f"{var} >= {fact.k}*{p[0]}"}[fact.kind]
        what = "ratio" if fact.kind == "times" else "difference"
        gap = f"The problem gives only a bound on the {what} between {noun(var)} and {noun(p[0])}, not its exact value."
        return Perturbation(**base, sentence=sentence, constraints=(constraint,), gap=gap)

    if operator == "condition_contraction":
        if form == "contract":
            sentence = voice.say("contract", var, a=display[var], n=fact.k)
            constraint = f"{var} >= {fact.k}"
            gap = f"The number given covers only part of {noun(var)}, so the problem never states {ask}."
        else:
            sentence = voice.say("contract_sum", var, a=display[var], b=display[p[0]], c=display[p[1]])
            constraint = f"{var} >= {p[0]} + {p[1]}"
            gap = f"The relation given covers only part of {noun(var)}, so the problem never states {ask}."
        return Perturbation(**base, sentence=sentence, constraints=(constraint,), gap=gap)

    raise ValueError(f"unknown perturbation {operator!r}; choose one of {OPERATORS}")


def choose(operator: str, graph: ProblemGraph, voice: Voice, rng: random.Random) -> tuple[str, str] | None:
    """A random applicable (variable, form) for ``operator``, or None."""
    options = candidates(operator, graph, voice)
    return rng.choice(options) if options else None
