"""AbstentionBench's headline: abstention precision / recall / F1 per dataset, averaged over datasets.

AbstentionBench (and TIAR, which reports it) computes the abstention metrics within each dataset —
sub-datasets separate, :func:`abstain.schema.dataset_of` — with every undefined value set to 0.0, and
reports their unweighted mean over datasets; accuracy is over answerable rows, a failed correctness
judgment counted as wrong; rows whose abstention label is unknown (a failed behavior judgment) are
dropped. abstain's pooled ``ab.*`` stays beside it::

    ab.macro.precision = mean over datasets of TP_d / (TP_d + FP_d)       (0.0 when nothing abstained)
    ab.macro.recall    = mean over datasets of TP_d / N_d                  (0.0 without unanswerable rows)
    ab.macro.f1        = mean over datasets of 2 P_d R_d / (P_d + R_d)     (0.0 when P_d + R_d = 0)
    ab.macro.accuracy  = mean over datasets with answerable rows of correct_d / A_d
    ab.macro.datasets  = how many datasets were averaged

The 95% CI resamples items within each dataset (a stratified bootstrap), so it is the CI of this mean.

Example:
    >>> import numpy as np
    >>> from abstain.metrics.counts import SHAPE
    >>> a = np.zeros(SHAPE); a[1, 2, 2, 3, 0] = 2; a[0, 0, 1, 1, 0] = 2      # 2 refusals of U, 2 correct
    >>> b = np.zeros(SHAPE); b[1, 0, 0, 1, 0] = 1; b[0, 2, 2, 3, 0] = 1      # answers U, refuses A
    >>> m = macro_metrics([a, b])
    >>> float(m["precision"]), float(m["recall"]), float(m["f1"]), float(m["accuracy"])
    (0.5, 0.5, 0.5, 0.5)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from abstain.metrics.counts import ABSTAINED, ANS, CORRECT, UNANS, count, kept, total
from abstain.metrics.ua import safe_div

__all__ = ["macro_metrics"]


def macro_metrics(tensors: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """The AbstentionBench macro averages of per-dataset count tensors (each ``SHAPE`` or ``(B, *SHAPE)``)."""
    if not tensors:
        nan = np.array(np.nan)
        return {"precision": nan, "recall": nan, "f1": nan, "accuracy": nan, "datasets": np.array(0.0)}
    precision, recall, f1, accuracy, answerable = [], [], [], [], []
    for c in tensors:
        labelled = kept(c, ("behavior",))  # an unknown abstention label drops the row
        tp = count(labelled, ABSTAINED, label=UNANS)
        p = safe_div(tp, count(labelled, ABSTAINED))
        r = safe_div(tp, total(labelled, label=UNANS))
        precision.append(p)
        recall.append(r)
        f1.append(safe_div(2 * p * r, p + r))
        n_a = total(c, label=ANS)  # a failed correctness judgment counts as wrong
        accuracy.append(safe_div(count(c, CORRECT, label=ANS), n_a))
        answerable.append(n_a > 0)
    has_a = np.stack(answerable).astype(float)
    acc = np.stack(accuracy)
    return {
        "precision": np.mean(np.stack(precision), axis=0),
        "recall": np.mean(np.stack(recall), axis=0),
        "f1": np.mean(np.stack(f1), axis=0),
        "accuracy": np.where(has_a.sum(axis=0) > 0, (acc * has_a).sum(axis=0) / np.maximum(has_a.sum(axis=0), 1), np.nan),
        "datasets": np.full(np.shape(precision[0]), float(len(tensors))),
    }
