"""Explicit abstention against a confidence threshold at the same coverage, on the same items.

Under a protocol that lets the model abstain (``idk``, ``clarify`` …), its explicit abstentions give one point: the
*coverage* ``c`` (the share of items it answered) and the *risk* at ``c`` (the share of its answers that are wrong;
an answer to an unanswerable item is wrong). The same model under ``answer_only`` (UA-Bench's forced answer) on the
same items, with a confidence estimate per response, gives a second policy: answer the ``c · N`` most confident
items, abstain on the rest. :func:`matched_coverage` compares the two at that coverage:

* ``conf.<e>.matched.coverage`` — ``c``; ``.explicit_risk`` and ``.threshold_risk`` — the two policies' risks;
  ``.risk_delta`` — explicit − threshold (below 0: saying "I don't know" beats thresholding the model's own
  confidence);
* ``.explicit_refusal_u`` and ``.threshold_refusal_u`` — the share of unanswerable items each policy declines;
  ``.refusal_u_delta`` — explicit − threshold (above 0: explicit abstention declines more of them);
* ``.threshold_coverage`` — the coverage the threshold reached (less than ``c`` only when ``answer_only`` itself
  refused more items than the explicit policy did: those never count as answered);
* ``.n`` — the items compared: those both protocols scored (a judge error on either side leaves an item out).

Every difference has a *paired* bootstrap CI: each resample draws the same items for both policies and recomputes
``c`` from the explicit policy on them (:mod:`abstain.metrics.paired` does the same for two runs). A threshold that
falls inside a block of tied confidences keeps a fraction of the block, the expectation over random tie-breaking
(:func:`abstain.metrics.confidence.top_sum`); a response without a value for the estimator counts as the least
confident.

Example:
    >>> from abstain.schema import ScoredRow
    >>> def row(i, protocol, label, pred, correct, conf=None):
    ...     return ScoredRow(id=str(i), question="q", answers=["1"] if label == "answerable" else [], label=label,
    ...                      response="", model="m", protocol=protocol, pred=pred, format_ok=True, correct=correct,
    ...                      answer="1" if pred == "ANSWER" else None, confidence=None if conf is None else {"logprob": conf})
    >>> forced = [row(0, "answer_only", "answerable", "ANSWER", True, -0.1),
    ...           row(1, "answer_only", "unanswerable", "ANSWER", False, -2.0),
    ...           row(2, "answer_only", "answerable", "ANSWER", False, -0.5)]
    >>> explicit = [row(0, "idk", "answerable", "ANSWER", True), row(1, "idk", "unanswerable", "MODEL_UNCERTAIN", None),
    ...             row(2, "idk", "answerable", "ANSWER", True)]
    >>> m = matched_coverage(explicit, forced, "logprob", resamples=0)
    >>> m["conf.logprob.matched.coverage"], m["conf.logprob.matched.explicit_risk"], m["conf.logprob.matched.threshold_risk"]
    (0.6666666666666666, 0.0, 0.5)
    >>> m["conf.logprob.matched.explicit_refusal_u"], m["conf.logprob.matched.threshold_refusal_u"]
    (1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from abstain.metrics.confidence import bootstrap_cis, top_sum
from abstain.outcomes import Outcome, outcome
from abstain.schema import ScoredRow

__all__ = ["MATCHED_KEYS", "matched_coverage", "threshold_curve"]

#: the ranking scores of a forced answer without a confidence value (least confident), and of an abstention under
#: answer_only (never kept); finite, so that ties between them are ties
MISSING, NEVER = -1e300, -1e308

#: the keys :func:`matched_coverage` writes under ``conf.<estimator>.matched.``
MATCHED_KEYS = ("coverage", "threshold_coverage", "explicit_risk", "threshold_risk", "risk_delta",
                "explicit_refusal_u", "threshold_refusal_u", "refusal_u_delta")


def _pairs(explicit: Sequence[ScoredRow], forced: Sequence[ScoredRow], name: str) -> dict[str, np.ndarray]:
    """Per (item, sample) both protocols scored: what each policy did, and the forced answer's confidence."""
    by_key = {(r.id, r.sample): r for r in forced if outcome(r) is not Outcome.UNSCORED}
    cols: dict[str, list[Any]] = {k: [] for k in ("item", "e_ans", "e_wrong", "f_ans", "f_wrong", "score", "unans")}
    for row in explicit:
        other = by_key.get((row.id, row.sample))
        mine = outcome(row)
        if other is None or mine is Outcome.UNSCORED:
            continue
        theirs = outcome(other)
        value = (other.confidence or {}).get(name)
        cols["item"].append(row.id)
        cols["e_ans"].append(mine is not Outcome.ABSTAIN)
        cols["e_wrong"].append(mine is Outcome.WRONG)
        cols["f_ans"].append(theirs is not Outcome.ABSTAIN)
        cols["f_wrong"].append(theirs is Outcome.WRONG)
        # an abstention under answer_only is never a kept answer; a missing value counts as the least confident
        cols["score"].append(NEVER if theirs is Outcome.ABSTAIN else (MISSING if value is None else float(value)))
        cols["unans"].append(row.label == "unanswerable")
    return {k: np.asarray(v, dtype=object if k == "item" else float) for k, v in cols.items()}


def _compare(p: dict[str, np.ndarray], idx: np.ndarray) -> dict[str, float | None]:
    e_ans, e_wrong, f_ans = p["e_ans"][idx], p["e_wrong"][idx], p["f_ans"][idx]
    f_wrong, score, unans = p["f_wrong"][idx], p["score"][idx], p["unans"][idx]
    n, answered = len(idx), float(e_ans.sum())
    kept = min(answered, float(f_ans.sum()))
    explicit_risk = float(e_wrong.sum()) / answered if answered else None
    threshold_risk = float(top_sum(score, f_wrong, kept)) / kept if kept else None
    u = float(unans.sum())
    explicit_refusal = float((unans * (1 - e_ans)).sum()) / u if u else None
    threshold_refusal = 1 - float(top_sum(score, unans * f_ans, kept)) / u if u else None
    return {
        "coverage": answered / n if n else None,
        "threshold_coverage": kept / n if n else None,
        "explicit_risk": explicit_risk,
        "threshold_risk": threshold_risk,
        "risk_delta": None if explicit_risk is None or threshold_risk is None else explicit_risk - threshold_risk,
        "explicit_refusal_u": explicit_refusal,
        "threshold_refusal_u": threshold_refusal,
        "refusal_u_delta": None if explicit_refusal is None else explicit_refusal - threshold_refusal,  # type: ignore[operator]
    }


def matched_coverage(explicit: Sequence[ScoredRow], forced: Sequence[ScoredRow], name: str, resamples: int = 1000,
                     seed: int = 0, confidence: float = 0.95, stream: str = "") -> dict[str, Any]:
    """``conf.<name>.matched.*`` (see the module doc) for the explicit protocol's rows against ``answer_only``'s."""
    pairs = _pairs(explicit, forced, name)
    n = len(pairs["item"])
    point = _compare(pairs, np.arange(n)) if n else dict.fromkeys(MATCHED_KEYS)
    rng = np.random.default_rng([seed, *f"matched:{name}:{stream}".encode()])
    cis = bootstrap_cis(list(pairs["item"]), point, lambda drawn: _compare(pairs, drawn), resamples, rng, confidence)
    prefix = f"conf.{name}.matched"
    out: dict[str, Any] = {f"{prefix}.n": len(set(pairs["item"])) if n else 0}
    for key in MATCHED_KEYS:
        out[f"{prefix}.{key}"] = point[key]
        out[f"{prefix}.{key}_ci"] = cis[key]
    return out


def threshold_curve(forced: Sequence[ScoredRow], name: str, points: int = 101) -> list[list[float]]:
    """The threshold policy's risk–coverage curve under ``answer_only``, coverage over *all* scored items (answers
    kept most confident first; abstentions never kept): ``[[coverage, risk], …]``, at most ``points`` points."""
    scored = [r for r in forced if outcome(r) is not Outcome.UNSCORED]
    answered = [r for r in scored if outcome(r) is not Outcome.ABSTAIN]
    if not answered:
        return []
    score = [(r.confidence or {}).get(name) for r in answered]
    s = np.array([MISSING if v is None else float(v) for v in score])
    wrong = np.array([outcome(r) is Outcome.WRONG for r in answered], dtype=float)
    k = np.unique(np.linspace(1, len(answered), min(points, len(answered))).round())
    risk = top_sum(s, wrong, k) / k
    return [[float(c), float(r)] for c, r in zip(k / len(scored), risk, strict=True)]
