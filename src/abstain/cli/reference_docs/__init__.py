"""The generated reference pages of the manual (``docs/reference/``): what the code says, never edited by hand.

Each page is a function of the code alone — the command line (:mod:`abstain.cli.reference_docs.cli`, from the
typer app) and the recipe schema (:mod:`abstain.cli.reference_docs.recipes`, from the pydantic models) — so a test
compares the committed page with what the generator prints now. ``make docs`` (``python -m
abstain.cli.reference_docs docs/reference``) rewrites them. The command line never imports this package (it is no
command: :mod:`abstain.cli`).

Example:
    >>> sorted(PAGES)
    ['cli.md', 'recipes.md']
    >>> page("recipes.md").splitlines()[0]
    '# Recipe reference'
"""

from __future__ import annotations

import importlib

__all__ = ["PAGES", "REGENERATE", "page"]

#: page file name -> the module whose ``markdown()`` writes it
PAGES = {"cli.md": "abstain.cli.reference_docs.cli", "recipes.md": "abstain.cli.reference_docs.recipes"}

#: how to rewrite the pages (what a stale page's test failure says)
REGENERATE = "make docs  (or: python -m abstain.cli.reference_docs docs/reference)"


def page(name: str) -> str:
    """The Markdown of one generated page, by file name (a key of :data:`PAGES`)."""
    return str(importlib.import_module(PAGES[name]).markdown())
