"""The table of docs/experiments/abstention-pays.md for one split: every arm's metrics with item-bootstrap CIs, paired
differences against ``base-idk``, the competence metrics against the start's probed p-hat, risk at matched coverage
against the start's own confidence threshold, and the two surface rules — all through abstain's scorer and
``abstain.metrics`` (nothing computed here but which rows go in).

    python examples/abstention-pays/table.py OUT SPLIT      # reads OUT/eval/SPLIT/<arm>/scored.jsonl, OUT/probe-start-SPLIT

An arm's folder is an ``abstain eval`` run: ``base`` (the bundled model, answer_only and idk), ``start`` (idk and
answer_only with ``--confidence logprob``), ``rtuning``, ``grpo-binary``, ``grpo-ternary``, ``grpo-tiar`` (idk); the
surface rules are the start's idk responses with a refusal put in for the items the rule declines, rescored.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from abstain.metrics import MetricsConfig, compute_metrics
from abstain.metrics.competence import competence_metrics, probed_p_hat
from abstain.metrics.paired import PairedConfig, paired_delta
from abstain.metrics.selective import matched_coverage
from abstain.schema import Item, ScoredRow, read_jsonl
from abstain.scoring import score_completions

TRAINED = ("rtuning", "grpo-binary", "grpo-ternary", "grpo-tiar")
#: the training split's vague words (run.sh's ladder); a rule fixed from them is what "surface" means here
VAGUE = re.compile(r"\b(some|a few|several|the number of)\b", re.IGNORECASE)
MULTIPLY = re.compile(r"×|\btimes\b", re.IGNORECASE)
REFUSAL = "\\boxed{I don't know.}"
KEYS = ("truth.acc", "truth.hallucination", "truth.abstain", "truth.truthfulness", "ab.precision", "ab.recall",
        "ab.f1")
PAIRED = ("truth.truthfulness", "truth.hallucination", "truth.acc")
RESAMPLES = 1000


def rows(run: Path, protocol: str) -> list[ScoredRow]:
    found = [r for r in read_jsonl(run / "scored.jsonl", ScoredRow) if r.protocol == protocol]
    if not found:
        raise SystemExit(f"{run}: no {protocol} rows in scored.jsonl")
    return found


def item_of(row: ScoredRow) -> Item:
    """The item a scored row answers (its item columns alone)."""
    return Item.model_validate(row.model_dump(include=set(Item.model_fields)))


def rule_rows(start: Sequence[ScoredRow], declines: Callable[[str], bool]) -> list[ScoredRow]:
    """The start's responses, a refusal where ``declines(question)``: rescored by abstain's scorer."""
    items = [item_of(r) for r in start]
    texts = [REFUSAL if declines(r.question) else r.response for r in start]
    return score_completions(items, texts, protocol="idk", model="rule")


def fmt(value: float | None, ci: Sequence[float] | None = None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def main(out: Path, split: str) -> None:
    runs = out / "eval" / split
    arms: dict[str, list[ScoredRow]] = {"base-answer": rows(runs / "base", "answer_only"),
                                        "base-idk": rows(runs / "base", "idk"), "start": rows(runs / "start", "idk")}
    arms |= {name: rows(runs / name, "idk") for name in TRAINED if (runs / name / "scored.jsonl").exists()}
    arms["rule-some"] = rule_rows(arms["start"], lambda q: bool(VAGUE.search(q)))
    arms["rule-mul"] = rule_rows(arms["start"], lambda q: bool(MULTIPLY.search(q)))
    forced = rows(runs / "start", "answer_only")
    p_hat = probed_p_hat(out / f"probe-start-{split}", [item_of(r) for r in arms["base-idk"]])
    config = MetricsConfig(resamples=RESAMPLES, seed=0)

    print(f"### {split}\n")
    head = ["arm", *KEYS, *(f"Δ {k} vs base-idk" for k in PAIRED), "over-conservativeness", "prudence",
            "AUROC within rung", "format errors", "risk Δ at matched coverage (start's logprob)"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for name, scored in arms.items():
        m = compute_metrics(scored, config)
        cells = [fmt(m.get(k), m.get(f"{k}_ci")) for k in KEYS]
        for key in PAIRED:
            d = paired_delta(arms["base-idk"], scored, key, PairedConfig(resamples=RESAMPLES))
            cells.append(fmt(d.delta, d.ci))
        c = competence_metrics(scored, p_hat, resamples=RESAMPLES)
        cells += [fmt(c[k], c[f"{k}_ci"]) for k in ("over_conservativeness", "prudence", "auroc_within")]
        cells.append(str(m.get("n.format_errors", "—")))
        if name in TRAINED or name.startswith("rule") or name == "start":
            mc = matched_coverage(scored, forced, "logprob", resamples=RESAMPLES)
            delta, ci = mc["conf.logprob.matched.risk_delta"], mc["conf.logprob.matched.risk_delta_ci"]
            cells.append(f"{fmt(delta, ci)} at c = {fmt(mc['conf.logprob.matched.coverage'])}")
        else:
            cells.append("—")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
