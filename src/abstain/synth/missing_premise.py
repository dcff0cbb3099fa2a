"""Certified missing-premise pairs: a well-posed problem and its twin that lacks one premise.

Each pair comes from one seeded draw: a theme, a problem graph (:mod:`abstain.synth.graph`), its
English rendering (:mod:`abstain.synth.render`) and one of ACA-RL's six perturbations of a critical
condition (:mod:`abstain.synth.perturb`). Both members are certified (:mod:`abstain.synth.certify`)
before anything is emitted; a draw that fails is drawn again, never emitted.

Determinism: pair ``i`` of seed ``s`` depends only on ``(s, i)``, so the same seed gives the same
bytes, and the first pairs of a longer run equal a shorter run's.

Example:
    >>> pair = make_pair(seed=11, index=0, operator="numerical_value_removal")
    >>> pair.original.label, pair.twin.label, pair.twin.perturbation
    ('answerable', 'unanswerable', 'numerical_value_removal')
    >>> pair.original.pair_id == pair.twin.pair_id
    True
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from abstain.schema import Item
from abstain.synth.certify import certify_answerable, certify_unanswerable
from abstain.synth.cue_match import Filler, MatchedFillers, filler_options, match_fillers
from abstain.synth.graph import GraphSpec, ProblemGraph, build_graph
from abstain.synth.perturb import OPERATORS, Perturbation, choose, perturb
from abstain.synth.render import Layout, Voice, make_layout, make_voice, variable_name
from abstain.synth.seeds import check_seed
from abstain.synth.themes import THEMES, Theme

__all__ = ["MAX_DRAWS", "SynthConfig", "SynthPair", "generate_missing_premise", "make_pair"]

#: draws per pair before giving up (a failed certification or an inapplicable operator draws again)
MAX_DRAWS = 200


@dataclass(frozen=True)
class SynthConfig:
    """What ``abstain synth --kind missing-premise`` generates.

    ``unanswerable_ratio=None`` writes complete pairs (original and twin, the evaluation layout);
    a ratio writes one row per drawn problem, that share of them as twins (the training mix: ACA-RL
    turns ~30% of its answerable problems into missing-premise versions).
    """

    n: int = field(metadata={"help": "rows to write"})
    seed: int = field(default=0, metadata={"help": "same seed -> byte-identical output"})
    themes: tuple[str, ...] = field(default=tuple(THEMES), metadata={"help": "themes to draw from"})
    operators: tuple[str, ...] = field(default=OPERATORS, metadata={"help": "perturbations, round robin"})
    depths: tuple[int, ...] = field(default=(2, 3, 4), metadata={"help": "solution-path depths, round robin"})
    distractors: tuple[int, ...] = field(default=(1, 2), metadata={"help": "distractor facts per problem"})
    unanswerable_ratio: float | None = field(default=None, metadata={"help": "None: pairs; else the twin share"})
    exclude_questions: frozenset[str] = field(default=frozenset(), metadata={"help": "never emit these texts"})
    allow_heldout_seed: bool = field(default=False, metadata={"help": "only the held-out build sets it"})
    cue_match: bool = field(default=False, metadata={"help": "twins keep their original's numerals, vague words "
                                                             "and length (abstain.synth.cue_match)"})
    stream: str = field(default="mp", metadata={"help": "random stream and id prefix: another stream, other problems"})

    def __post_init__(self) -> None:
        check_seed(self.seed, self.allow_heldout_seed)
        if self.n < 1:
            raise ValueError("--n must be >= 1")
        unknown = sorted(set(self.themes) - set(THEMES))
        if unknown or not self.themes:
            raise ValueError(f"unknown themes {unknown}; choose from {sorted(THEMES)}")
        bad = sorted(set(self.operators) - set(OPERATORS))
        if bad or not self.operators:
            raise ValueError(f"unknown perturbations {bad}; choose from {list(OPERATORS)}")
        if self.unanswerable_ratio is not None and not 0 <= self.unanswerable_ratio <= 1:
            raise ValueError("--unanswerable-ratio must be between 0 and 1")
        if not self.depths or min(self.depths) < 2:
            raise ValueError("depths must be >= 2 (a relation on the path is needed)")


@dataclass
class SynthPair:
    """An original, its twin and how many draws it took (failed certifications included)."""

    original: Item
    twin: Item
    draws: int
    rejected: list[str] = field(default_factory=list)


def themes_with_room(themes: Sequence[str], depth: int, distractors: int, spare: int = 0) -> list[str]:
    """The themes with entities enough for a problem of this size and ``spare`` unused ones (all, if none has).

    Example:
        >>> "savings" in themes_with_room(tuple(THEMES), 4, 2), "savings" in themes_with_room(tuple(THEMES), 8, 3)
        (True, False)
    """
    return [t for t in themes if len(THEMES[t].entities) >= depth + distractors + spare + 4] or list(themes)


def theme_spec(theme: Theme, depth: int, distractors: int) -> GraphSpec:
    return GraphSpec(depth=depth, distractors=distractors, value_range=theme.value_range,
                     offset_range=theme.offset_range, max_value=theme.max_value, rate_factors=theme.rate_ranges)


@dataclass
class Drawn:
    """One drawn, rendered problem (before perturbation)."""

    theme: Theme
    graph: ProblemGraph
    voice: Voice
    display: dict[str, str]
    layout: Layout
    unused: list[tuple[str, str]]  # entities not in the problem: (variable, display)

    def sentences(self) -> dict[str, str]:
        return {v: self.voice.fact_sentence(f, self.display) for v, f in self.graph.facts.items()}

    def text(self) -> str:
        return self.layout.render(self.sentences())

    def graph_dict(self) -> dict:
        g = self.graph
        return {"variables": g.variables, "equations": g.equations(), "constraints": [], "target": g.target}


def draw_problem(rng: random.Random, theme: Theme, spec: GraphSpec, spare: int = 0) -> Drawn:
    """Draw a graph over the theme's entities and lay it out in English (``spare`` more unused entities)."""
    voice = make_voice(theme, rng)
    # enough entities for the chain, side values of sums, distractors and a fresh one (entity disruption)
    entities = rng.sample(theme.entities, min(len(theme.entities), 2 * spec.depth + spec.distractors + 2 + spare))
    unit = voice.unit
    names = [variable_name(stem, unit) for stem, _ in entities]
    display = dict(zip(names, (shown for _, shown in entities)))
    graph = build_graph(rng, spec, names, allow_rate=theme.has("rate"))
    layout = make_layout(graph, voice, display, rng)
    unused = [(n, display[n]) for n in names if n not in graph.facts]
    return Drawn(theme, graph, voice, {v: display[v] for v in names}, layout, unused)


def twin_graph(drawn: Drawn, pert: Perturbation) -> dict:
    g = drawn.graph
    equations: list[str] = []
    for var, fact in g.facts.items():
        if var == pert.var:
            equations.extend(pert.added)
        else:
            equations.append(fact.equation())
    return {"variables": g.variables + list(pert.new_variables), "equations": equations,
            "constraints": list(pert.constraints), "target": g.target}


_NUMBERS = re.compile(r"\d+")


def _number_gone(text: str, numbers: Sequence[int]) -> bool:
    return not numbers or not set(map(str, numbers)) & set(_NUMBERS.findall(text))


def _with_filler(graph: dict, filler: Filler, var: str) -> dict:
    if not filler.equations:  # an undetermined quantity nothing reads: the certificate needs no variable for it
        return graph
    return {**graph, "variables": [*graph["variables"], var], "equations": [*graph["equations"], *filler.equations]}


def make_pair(seed: int, index: int, operator: str, themes: Sequence[str] = tuple(THEMES),
              depth: int = 3, distractors: int = 1, stream: str = "mp", cue_match: bool = False) -> SynthPair:
    """Pair ``index`` of ``seed``: certified original and twin perturbed by ``operator``.

    ``cue_match``: both get one more sentence about an entity the problem never asks about, chosen so the twin
    states as many numbers and vague words as its original and is as long within 10%
    (:mod:`abstain.synth.cue_match`); both are certified with it. Without it the output is what it always was.
    """
    rng = random.Random(f"abstain-synth:{stream}{':cue' if cue_match else ''}:{seed}:{index}")
    pair_id = f"synth-{stream}{'c' if cue_match else ''}-s{seed}-{index:05d}"
    rejected: list[str] = []
    usable = themes_with_room(themes, depth, distractors, spare=1 if cue_match else 0)
    for draw in range(1, MAX_DRAWS + 1):
        theme = THEMES[rng.choice(usable)]
        drawn = draw_problem(rng, theme, theme_spec(theme, depth, distractors), spare=1 if cue_match else 0)
        picked = choose(operator, drawn.graph, drawn.voice, rng)
        if picked is None:
            rejected.append(f"{theme.name}: no condition on the path takes {operator}")
            continue
        var, form = picked
        fresh = rng.choice(drawn.unused) if drawn.unused else None
        if operator == "entity_disruption" and fresh is None:
            rejected.append(f"{theme.name}: no unused entity for entity_disruption")
            continue
        pert = perturb(operator, drawn.graph, drawn.voice, drawn.display, var, form, fresh)
        sentences = drawn.sentences()
        original_text = drawn.layout.render(sentences)
        twin_text = drawn.layout.render({**sentences, var: pert.sentence})
        if not _number_gone(twin_text, pert.removed_numbers):
            rejected.append("a removed number is still in the twin's text")
            continue
        original_graph, perturbed_graph = drawn.graph_dict(), twin_graph(drawn, pert)
        matched = None
        if cue_match:
            matched = _match(drawn, fresh, original_text, twin_text, pert, rng)
            if matched is None:
                rejected.append(f"{theme.name}: no filler pair matches the twin's numerals, vague words and length")
                continue
            layout = matched.layout(drawn.layout)
            original_text = layout.render({**sentences, matched.var: matched.original.sentence})
            twin_text = layout.render({**sentences, var: pert.sentence, matched.var: matched.twin.sentence})
            original_graph = _with_filler(original_graph, matched.original, matched.var)
            perturbed_graph = _with_filler(perturbed_graph, matched.twin, matched.var)
        answer = str(drawn.graph.values[drawn.graph.target])
        cert_a = certify_answerable(original_graph, answer)
        cert_u = certify_unanswerable(perturbed_graph, hint={**drawn.graph.values, **dict(pert.new_values)})
        if not (cert_a.ok and cert_u.ok):
            rejected.append(f"certification failed: {cert_a.reason or cert_u.reason}")
            continue
        common = {"category": "reasoning", "source": "synth/missing-premise", "pair_id": pair_id,
                  "depth": drawn.graph.depth_of(drawn.graph.target), "theme": theme.name}
        original = Item(id=f"{pair_id}-a", question=original_text, answers=[answer], label="answerable",
                        graph=original_graph, gap_variable=None, meta={"pair_id": pair_id}, **common)
        twin = Item(id=f"{pair_id}-u", question=twin_text, answers=[], label="unanswerable",
                    perturbation=operator, gap=pert.gap, graph=perturbed_graph, gap_variable=var,
                    meta={"pair_id": pair_id, "form": pert.form, "original_sentence": pert.original,
                          "perturbed_sentence": pert.sentence, "gap_entity": drawn.display[var],
                          **({"replacement_entity": fresh[1]} if operator == "entity_disruption" and fresh else {}),
                          "witnesses": list(cert_u.witnesses),
                          **({"cue_filler": matched.twin.sentence} if matched else {})},
                    **common)
        if matched is not None:
            original.meta["cue_filler"] = matched.original.sentence
        return SynthPair(original, twin, draw, rejected)
    raise RuntimeError(f"pair {index} of seed {seed}: {MAX_DRAWS} draws failed ({rejected[-3:]})")


def _match(drawn: Drawn, fresh: tuple[str, str] | None, original: str, twin: str, pert: Perturbation,
           rng: random.Random) -> MatchedFillers | None:
    """The fillers of a cue-matched pair: an unused entity (not the one entity disruption moved the fact to)."""
    spare = [e for e in drawn.unused if e != fresh]
    if not spare:
        return None
    entity = rng.choice(spare)
    taken = {int(n) for n in _NUMBERS.findall(original + " " + twin)} | set(pert.removed_numbers)
    other = rng.choice(sorted(drawn.graph.facts))
    options = filler_options(drawn.voice, drawn.display, entity, other, taken, rng)
    picked = match_fillers(original, twin, options, rng)
    if picked is None:
        return None
    first = 1 if drawn.layout.slots and drawn.layout.slots[0][0] == "text" else 0  # after an intro
    return MatchedFillers(picked[0], picked[1], entity[0], rng.randint(first, len(drawn.layout.slots)))


def _twin_indices(cfg: SynthConfig) -> set[int]:
    if cfg.unanswerable_ratio is None:
        return set(range(cfg.n))
    k = round(cfg.unanswerable_ratio * cfg.n)
    return set(random.Random(f"abstain-synth:mix:{cfg.seed}").sample(range(cfg.n), k))


def generate_missing_premise(cfg: SynthConfig, on_pair: Callable[[SynthPair], None] | None = None) -> Iterator[Item]:
    """Yield ``cfg.n`` rows: complete pairs, or the training mix when ``unanswerable_ratio`` is set.

    Perturbations go round robin over the twins (all six types equally often), depths round robin
    over the pairs.
    """
    pairs_mode = cfg.unanswerable_ratio is None
    n_problems = (cfg.n + 1) // 2 if pairs_mode else cfg.n
    twins = _twin_indices(cfg) if not pairs_mode else set(range(n_problems))
    emitted, twin_rank = 0, 0
    for i in range(n_problems):
        is_twin = i in twins
        operator = cfg.operators[twin_rank % len(cfg.operators)] if is_twin else cfg.operators[i % len(cfg.operators)]
        twin_rank += is_twin
        index = i
        while True:
            pair = make_pair(cfg.seed, index, operator, cfg.themes, cfg.depths[i % len(cfg.depths)],
                             cfg.distractors[i % len(cfg.distractors)], stream=cfg.stream, cue_match=cfg.cue_match)
            if not ({pair.original.question, pair.twin.question} & cfg.exclude_questions):
                break
            index += 1_000_000  # an excluded (held-out) text: draw this slot again from another stream
        if on_pair is not None:
            on_pair(pair)
        rows = [pair.original, pair.twin] if pairs_mode else [pair.twin if is_twin else pair.original]
        for row in rows:
            if emitted < cfg.n:
                emitted += 1
                yield row
