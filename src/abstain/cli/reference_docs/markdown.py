"""Small Markdown helpers the generated reference pages share: escaping text for a page or a table cell, and the
anchor GitHub gives a heading.

Example:
    >>> cell("a | b with `x | y` and <path>")
    'a \\\\| b with `x \\\\| y` and \\\\<path>'
    >>> rst("``abstain train grpo``, :mod:`abstain.data.guard`")
    '`abstain train grpo`, `abstain.data.guard`'
    >>> slug("abstain train grpo"), slug("`data.synth`: certified synthesis")
    ('abstain-train-grpo', 'datasynth-certified-synthesis')
"""

from __future__ import annotations

import re

__all__ = ["cell", "code", "rst", "slug", "text", "table"]


def text(value: str) -> str:
    """``value`` as Markdown prose: ``*`` and a tag-like ``<`` outside code spans escaped (``hf:<path>`` would
    otherwise vanish as an HTML tag, ``conf.*`` start emphasis)."""
    parts = re.split(r"(`[^`]*`)", value)
    return "".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1
                   else re.sub(r"<(?=[A-Za-z/!])", r"\\<", p.replace("*", r"\*")) for p in parts)


def rst(value: str) -> str:
    """A docstring's reStructuredText as Markdown: a role (``:mod:`abstain.data```) and a double-backquoted literal
    become single-backquoted code spans."""
    value = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", value)
    return re.sub(r"``([^`]+)``", r"`\1`", value)


def cell(value: str) -> str:
    """``value`` in one table cell: one line, its ``|`` escaped (also inside code spans: GitHub's tables need it)."""
    return text(" ".join(value.split())).replace("|", r"\|")


def code(value: object) -> str:
    """``value`` as a code span (longer fences when it holds backticks)."""
    shown = str(value)
    fence = "``" if "`" in shown else "`"
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lowercase, punctuation but ``-`` and ``_`` dropped, each space a ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table of already escaped cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
