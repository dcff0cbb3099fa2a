"""UA-Bench metrics as its released code computes them, on hand-built scored rows with N != M.

Every expected value below is worked out by hand from the formulas of UA-Bench's
``code/summarize_attr_results.py`` (github.com/ren258/UA-Bench @ 63094762): counts normalized by their
set's size (the recall's false negatives too), F1 the harmonic mean, every zero division 0.
"""

from __future__ import annotations

import numpy as np
import pytest

from abstain.metrics import MetricsConfig, compute_metrics
from abstain.metrics.counts import Counts
from abstain.metrics.ua import ua_metrics
from abstain.schema import ScoredRow


def _row(n: int, label: str, pred: str, correct: bool | None = None) -> ScoredRow:
    answered = pred == "ANSWER"
    return ScoredRow(
        id=f"{label[0]}{n}", question=f"q{n}", answers=["4"] if label == "answerable" else [], label=label,
        response="\\boxed{4}" if answered else f"\\boxed{{<{pred}>}}", model="hand", pred=pred,
        answer="4" if answered else None, format_ok=True,
        correct=(correct if label == "answerable" else False) if answered else None,
    )


def _rows(spec: dict[tuple[str, str, bool | None], int]) -> list[ScoredRow]:
    rows: list[ScoredRow] = []
    for (label, pred, correct), k in spec.items():
        rows += [_row(len(rows) + i, label, pred, correct) for i in range(k)]
    return rows


def _ua(rows: list[ScoredRow]) -> dict[str, float]:
    m = compute_metrics(rows, MetricsConfig(resamples=0))
    return {k[3:]: v for k, v in m.items() if k.startswith("ua.") and not k.endswith("_ci")}


def test_the_issue_example_n100_m50_official_du_f1_is_0_762():
    # N = 100 unanswerable: 80 DATA_UNCERTAIN, 20 answered. |A| = 60: 10 correct, 5 DATA_UNCERTAIN,
    # 45 wrong -> M = 50.
    rows = _rows({("unanswerable", "DATA_UNCERTAIN", None): 80, ("unanswerable", "ANSWER", None): 20,
                  ("answerable", "ANSWER", True): 10, ("answerable", "DATA_UNCERTAIN", None): 5,
                  ("answerable", "ANSWER", False): 45})
    m = _ua(rows)
    # TP/N = 0.8, FP/M = 0.1, FN/M = 20/50 = 0.4 -> P = 8/9, R = 2/3, F1 = 16/21
    assert m["du_precision"] == pytest.approx(8 / 9)
    assert m["du_recall"] == pytest.approx(2 / 3)
    assert m["du_f1"] == pytest.approx(16 / 21) and round(m["du_f1"], 3) == 0.762
    # the plain detection rate, and what the harmonic mean with it would be (abstain's earlier du_f1)
    assert m["du_rate"] == pytest.approx(0.8)
    assert 2 * m["du_precision"] * m["du_rate"] / (m["du_precision"] + m["du_rate"]) == pytest.approx(16 / 19)
    # nobody said MODEL_UNCERTAIN: TP_mu = 0 -> P = R = F1 = 0 (0/0 -> 0 as released), not null
    assert m["mu_precision"] == 0.0 and m["mu_recall"] == 0.0 and m["mu_f1"] == 0.0 and m["mu_rate"] == 0.0
    assert m["avg_f1"] == pytest.approx(8 / 21)
    # sd_precision = (0 + 0.8) / (0.8 + FP_mu/N + FP_du/M) = 0.8 / 0.9
    assert m["sd_precision"] == pytest.approx(8 / 9)
    # balanced accuracy = (TP_mu/(TP_mu + FN_mu) + TP_du/(TP_du + FP_mu)) / 2 = (0/50 + 80/80) / 2
    assert m["balanced_accuracy"] == pytest.approx(0.5)
    assert m["acc"] == pytest.approx(10 / 60)


def test_both_attributions_with_n_not_m():
    # N = 40: 12 DU, 8 MU, 20 answered. |A| = 30: 5 correct, 6 MU, 3 DU, 16 wrong -> M = 25.
    rows = _rows({("unanswerable", "DATA_UNCERTAIN", None): 12, ("unanswerable", "MODEL_UNCERTAIN", None): 8,
                  ("unanswerable", "ANSWER", None): 20, ("answerable", "ANSWER", True): 5,
                  ("answerable", "MODEL_UNCERTAIN", None): 6, ("answerable", "DATA_UNCERTAIN", None): 3,
                  ("answerable", "ANSWER", False): 16})
    m = _ua(rows)
    # DU: TP/N = 12/40 = 3/10, FP/M = 3/25, FN/M = 28/25
    #     P = (3/10) / (3/10 + 3/25) = 15/21 = 5/7; R = (3/10) / (3/10 + 28/25) = 15/71
    du_p, du_r = 5 / 7, 15 / 71
    assert m["du_precision"] == pytest.approx(du_p) and m["du_recall"] == pytest.approx(du_r)
    assert m["du_f1"] == pytest.approx(2 * du_p * du_r / (du_p + du_r)) == pytest.approx(15 / 46)
    # MU: TP/M = 6/25, FP/N = 8/40 = 1/5, FN/N = 19/40
    #     P = (6/25) / (6/25 + 1/5) = 6/11; R = (6/25) / (6/25 + 19/40) = 48/143
    mu_p, mu_r = 6 / 11, 48 / 143
    assert m["mu_precision"] == pytest.approx(mu_p) and m["mu_recall"] == pytest.approx(mu_r)
    assert m["mu_f1"] == pytest.approx(2 * mu_p * mu_r / (mu_p + mu_r))
    assert m["du_rate"] == pytest.approx(3 / 10) and m["mu_rate"] == pytest.approx(6 / 25)
    assert m["avg_f1"] == pytest.approx((m["du_f1"] + m["mu_f1"]) / 2)
    # sd_precision = (6/25 + 3/10) / (6/25 + 3/10 + 1/5 + 3/25) = (27/50) / (43/50)
    assert m["sd_precision"] == pytest.approx(27 / 43)
    # balanced accuracy = (6/25 + 12/(12 + 8)) / 2 = (6/25 + 3/5) / 2 = 21/50
    assert m["balanced_accuracy"] == pytest.approx(21 / 50)
    assert m["acc"] == pytest.approx(5 / 30)


def test_at_n_equal_m_the_normalized_recall_is_the_plain_rate():
    # N = M = 10: TP/N + FN/M = 1, so R = TP/N
    rows = _rows({("unanswerable", "DATA_UNCERTAIN", None): 7, ("unanswerable", "ANSWER", None): 3,
                  ("answerable", "ANSWER", False): 8, ("answerable", "MODEL_UNCERTAIN", None): 2})
    m = _ua(rows)
    assert m["du_recall"] == pytest.approx(m["du_rate"]) == pytest.approx(0.7)
    assert m["mu_recall"] == pytest.approx(m["mu_rate"]) == pytest.approx(0.2)


def test_every_zero_division_is_zero_unlike_the_other_families():
    # answerable rows only, all correct: N = 0 and M = 0
    rows = _rows({("answerable", "ANSWER", True): 3})
    m = compute_metrics(rows, MetricsConfig(resamples=20))
    for key in ("du_precision", "du_recall", "du_f1", "du_rate", "mu_precision", "mu_recall", "mu_f1", "mu_rate",
                "avg_f1", "sd_precision", "balanced_accuracy"):
        assert m[f"ua.{key}"] == 0.0, key
        assert m[f"ua.{key}_ci"] == [0.0, 0.0], key
    assert m["ua.acc"] == 1.0
    assert m["r1.u_ref"] is None and m["ab.recall"] is None  # the project's null convention elsewhere
    # unanswerable rows only: |A| = 0 -> acc 0, and with M = 0 a detected DU scores P = R = 1 (as released)
    only_u = _rows({("unanswerable", "DATA_UNCERTAIN", None): 2, ("unanswerable", "ANSWER", None): 2})
    u = _ua(only_u)
    assert u["acc"] == 0.0 and u["du_precision"] == 1.0 and u["du_recall"] == 1.0 and u["du_rate"] == 0.5


def test_vectorized_over_bootstrap_resamples():
    rows = _rows({("unanswerable", "DATA_UNCERTAIN", None): 3, ("unanswerable", "MODEL_UNCERTAIN", None): 1,
                  ("answerable", "ANSWER", True): 2, ("answerable", "ANSWER", False): 2,
                  ("answerable", "MODEL_UNCERTAIN", None): 1})
    counts = Counts.from_rows(rows)
    boot = counts.bootstrap(50, np.random.default_rng(0))
    stacked = ua_metrics(boot)
    for i in (0, 17, 49):
        one = ua_metrics(boot[i])
        for key, values in stacked.items():
            assert values.shape == (50,)
            assert values[i] == pytest.approx(float(one[key])), key


def test_a_uabench_task_pools_its_datasets(fixtures_dir):
    # the fixture checkout; predictions chosen per item, so every count below is known
    from abstain.data import load_custom

    items = {i.id: i for i in load_custom(f"uabench:{fixtures_dir / 'uabench'}").items}
    decide = {  # knowledge: gaia + musique_1000 answerable, selfaware unanswerable
        "uabench-gaia-0": ("ANSWER", True), "uabench-gaia-1": ("DATA_UNCERTAIN", None),
        "uabench-musique_1000-0": ("MODEL_UNCERTAIN", None), "uabench-musique_1000-1": ("ANSWER", False),
        "uabench-selfaware-0": ("DATA_UNCERTAIN", None), "uabench-selfaware-1": ("DATA_UNCERTAIN", None),
        "uabench-selfaware-2": ("MODEL_UNCERTAIN", None),
        # reasoning: olympiadbench-math answerable, gsm8k-mip + math-mip unanswerable
        "uabench-olympiadbench-math-0": ("ANSWER", True), "uabench-olympiadbench-math-1": ("ANSWER", True),
        "uabench-gsm8k-mip-0": ("DATA_UNCERTAIN", None), "uabench-gsm8k-mip-1": ("ANSWER", False),
        "uabench-math-mip-0": ("DATA_UNCERTAIN", None),
    }
    assert set(decide) == set(items)
    rows = []
    for item_id, (pred, correct) in decide.items():
        item = items[item_id]
        rows.append(ScoredRow(**item.model_dump(), response="", model="hand", pred=pred,
                              answer="x" if pred == "ANSWER" else None, format_ok=True, correct=correct))
    m = compute_metrics(rows, MetricsConfig(resamples=0))
    k = {key.removeprefix("by_category.knowledge.ua."): v for key, v in m.items()
         if key.startswith("by_category.knowledge.ua.")}
    # Commonsense QA: |A| = 4, correct 1, M = 3, N = 3
    # DU: TP 2, FP 1, FN 1 -> P = (2/3)/(2/3 + 1/3) = 2/3, R = (2/3)/(2/3 + 1/3) = 2/3
    assert k["du_precision"] == pytest.approx(2 / 3) and k["du_recall"] == pytest.approx(2 / 3)
    assert k["du_f1"] == pytest.approx(2 / 3)
    # MU: TP 1, FP 1, FN 2 -> P = (1/3)/(1/3 + 1/3) = 1/2, R = (1/3)/(1/3 + 2/3) = 1/3, F1 = 2/5
    assert k["mu_precision"] == pytest.approx(1 / 2) and k["mu_recall"] == pytest.approx(1 / 3)
    assert k["mu_f1"] == pytest.approx(2 / 5) and k["avg_f1"] == pytest.approx((2 / 3 + 2 / 5) / 2)
    assert k["acc"] == pytest.approx(1 / 4)
    r = {key.removeprefix("by_category.reasoning.ua."): v for key, v in m.items()
         if key.startswith("by_category.reasoning.ua.")}
    # Math QA: both answerable correct -> M = 0; N = 3 with TP_du = 2: FP/M = FN/M = 0/0 -> 0, so P = R = 1
    assert r["acc"] == 1.0 and r["du_precision"] == 1.0 and r["du_recall"] == 1.0 and r["du_f1"] == 1.0
    assert r["du_rate"] == pytest.approx(2 / 3) and r["mu_f1"] == 0.0
