"""Synthesis: certified missing-premise pairs, hard variants and the LLM rewrite pipeline.

Problems are drawn from an explicit equation graph, so every emitted item carries a proof: the
original's equations determine the target (equal to ``answers[0]``), the twin's leave it open (two
positive-integer solutions with different targets). See docs/synthesis.md.

Example:
    >>> from abstain.synth import SynthConfig, generate_missing_premise, verify_item
    >>> rows = list(generate_missing_premise(SynthConfig(n=12, seed=1)))
    >>> sorted({r.perturbation for r in rows if r.perturbation}) == sorted(OPERATORS)
    True
    >>> all(verify_item(r) == [] for r in rows)
    True
"""

from abstain.synth.certify import Certificate, certify_answerable, certify_unanswerable
from abstain.synth.graph import Fact, GraphSpec, ProblemGraph, build_graph
from abstain.synth.hard import HARD_THEMES, HardConfig, generate_hard, make_hard
from abstain.synth.heldout import HELDOUT_SEED, build_heldout, heldout_file, heldout_questions, iter_heldout
from abstain.synth.missing_premise import SynthConfig, SynthPair, generate_missing_premise, make_pair
from abstain.synth.perturb import OPERATORS, Perturbation
from abstain.synth.seeds import check_seed
from abstain.synth.themes import THEMES, Theme
from abstain.synth.verify import verify_graph, verify_item

__all__ = [
    "Certificate",
    "Fact",
    "GraphSpec",
    "HARD_THEMES",
    "HELDOUT_SEED",
    "HardConfig",
    "OPERATORS",
    "Perturbation",
    "ProblemGraph",
    "SynthConfig",
    "SynthPair",
    "THEMES",
    "Theme",
    "build_graph",
    "build_heldout",
    "certify_answerable",
    "certify_unanswerable",
    "check_seed",
    "generate_hard",
    "generate_missing_premise",
    "heldout_file",
    "heldout_questions",
    "iter_heldout",
    "make_hard",
    "make_pair",
    "verify_graph",
    "verify_item",
]
