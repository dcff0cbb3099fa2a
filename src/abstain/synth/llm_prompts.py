"""Prompts of the LLM rewrite pipeline (our wording of ACA-RL appendix F and UA-Bench's validator).

Every prompt asks for one JSON object and shows its exact shape; :func:`parse_json_reply` tolerates
what small models add around it (prose, code fences, trailing commas, single quotes, a cut-off end).

Example:
    >>> parse_json_reply('Sure! ```json\\n{"answerable": false, "missing": "the price",}\\n```')
    {'answerable': False, 'missing': 'the price'}
    >>> parse_json_reply("I think the answer is 42.") is None
    True
"""

from __future__ import annotations

from typing import Any

import json_repair

__all__ = ["DECOMPOSE", "GRAPH", "OPERATOR_DEFINITIONS", "PERTURB", "REWRITE", "VALIDATE", "parse_json_reply"]

#: ACA-RL Table 8's six condition-breaking operations, defined for the perturbation prompt
OPERATOR_DEFINITIONS = {
    "numerical_value_removal": "Remove the number from the condition: the quantity is still mentioned, but its "
                               "value is no longer given.",
    "relationship_removal": "Remove the relationship the condition states between two quantities (such as "
                            "'twice as many as' or '5 more than'); both quantities stay mentioned.",
    "relationship_unquantifiable_replacement": "Replace the exact relationship with a vague one that cannot be "
                                               "computed, e.g. '5 more than' -> 'more than', 'three times' -> "
                                               "'a few times'.",
    "entity_disruption": "State the same fact about a different person or object, one the question does not ask "
                         "about.",
    "qualifier_disruption": "Weaken the condition with a qualifier so the exact value is lost, e.g. 'at least 12', "
                            "'about 12', 'some of the 12'.",
    "condition_contraction": "Make the condition cover only part of what it described, e.g. '12 of her eggs are "
                             "brown' instead of 'she has 12 eggs'.",
}

DECOMPOSE = """Split a math word problem into its background, its conditions (the facts with numbers) and its question.

Example problem: Sara runs a bakery. She bakes 40 rolls a day and sells 25 of them. How many rolls are left each day?
Example reply: {{"background": "Sara runs a bakery.", "conditions": ["She bakes 40 rolls a day.", "She sells 25 of them."], "question": "How many rolls are left each day?"}}

Problem: {problem}
Reply with only the JSON object."""

GRAPH = """Build the reasoning graph of a solution: each step uses conditions (c1, c2, ...) or earlier steps (s1, ...).

Example conditions:
c1: She bakes 40 rolls a day.
c2: She sells 25 of them.
Example solution: 40 - 25 = 15 rolls are left.
Example reply: {{"steps": [{{"id": "s1", "uses": ["c1", "c2"], "result": "40 - 25 = 15 rolls left"}}], "answer": "s1"}}

Conditions:
{conditions}
Question: {question}
Solution: {solution}
Reply with only the JSON object."""

PERTURB = """Break one condition of a word problem so that the question can no longer be answered.

Example condition: "She bakes 40 rolls a day."
Example operation (numerical_value_removal): remove the number.
Example reply: {{"perturbed_condition": "She bakes rolls every day.", "gap": "The number of rolls baked each day is not given."}}

Condition: "{condition}"
Operation ({operator}): {definition}
The question that must become unanswerable: {question}
Reply with only the JSON object."""

REWRITE = """Write the background, the facts and the question as one fluent word problem. Keep every fact as it is given and add no new numbers.

Example background: Sara runs a bakery.
Example facts:
- She bakes rolls every day.
- She sells 25 of them.
Example question: How many rolls are left each day?
Example reply: {{"problem": "Sara runs a bakery and bakes rolls every day. She sells 25 of them. How many rolls are left each day?"}}

Background: {background}
Facts:
{facts}
Question: {question}
Reply with only the JSON object."""

VALIDATE = """Can this problem be answered with one exact number, using only the information it gives? If a needed quantity or relation is missing or vague, it cannot.

Example problem: Sara bakes rolls every day and sells 25 of them. How many rolls are left each day?
Example reply: {{"answerable": false, "missing": "how many rolls Sara bakes each day"}}

Problem: {problem}
Reply with only the JSON object."""


def parse_json_reply(text: str) -> dict[str, Any] | None:
    """The first JSON object in a model's reply, repaired where possible; None when there is none."""
    if "{" not in text:
        return None
    try:
        value = json_repair.loads(text[text.index("{"):])
    except Exception:  # json_repair is lenient, but a pathological text must not stop a pipeline
        return None
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, dict)), None)
    return value if isinstance(value, dict) and value else None
