"""The tables of docs/experiments/confidence.md from finished runs: per model and protocol, accuracy, each estimator's
AUROC / AURC / PRR (ECE, Brier) with 95% CIs beside two model-free baselines computed on the same answers (a shorter
response is more confident; a random order), and explicit abstention under idk against a threshold on answer_only at
the same coverage, with the paired CI.

    python examples/confidence/summarize.py runs/confidence/bundled runs/confidence/bundled-abstain
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from abstain.records.runs import SCORED, RunDir
from abstain.metrics.confidence import answered_scores, auroc
from abstain.schema import ScoredRow


def _v(m: dict, key: str) -> str:
    value, ci = m.get(key), m.get(f"{key}_ci")
    if value is None:
        return "—"
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else f"{value:.3f}"


def _length_auroc(rows: list[ScoredRow], protocol: str, name: str) -> str:
    """AUROC of "a shorter response is more confident" over the same answers the estimator is scored on."""
    group = [r for r in rows if r.protocol == protocol]
    _, correct, ids = answered_scores(group, name)
    length = {r.id: -len(r.response) for r in group}
    value = auroc([length[i] for i in ids], correct) if ids else None
    return "—" if value is None else f"{value:.3f}"


def main(paths: list[str]) -> None:
    for path in paths:
        run = Path(path)
        metrics = json.loads((run / "metrics.json").read_text())
        config = json.loads((run / "config.json").read_text())
        rows = RunDir(run).read_rows(SCORED, ScoredRow)
        print(f"\n### {config['model']} ({run})\n")
        print("| protocol | estimator | answers | accuracy | AUROC | AURC | PRR | ECE | Brier | length AUROC |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for protocol, m in metrics["protocols"].items():
            for name in config["confidence"]:
                p = f"conf.{name}"
                print(f"| {protocol} | {name} | {m.get(p + '.n')} | {_v(m, p + '.accuracy')} | {_v(m, p + '.auroc')} | "
                      f"{_v(m, p + '.aurc')} | {_v(m, p + '.prr')} | {_v(m, p + '.ece')} | {_v(m, p + '.brier')} | "
                      f"{_length_auroc(rows, protocol, name)} |")
        print("\n| protocol | estimator | items | coverage | explicit risk | threshold risk | risk Δ (paired CI) | "
              "explicit refusal U | threshold refusal U | refusal U Δ (paired CI) |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for protocol, m in metrics["protocols"].items():
            for name in config["confidence"]:
                p = f"conf.{name}.matched"
                if f"{p}.coverage" not in m:
                    continue
                print(f"| {protocol} | {name} | {m[p + '.n']} | {_v(m, p + '.coverage')} | {_v(m, p + '.explicit_risk')} | "
                      f"{_v(m, p + '.threshold_risk')} | {_v(m, p + '.risk_delta')} | {_v(m, p + '.explicit_refusal_u')} | "
                      f"{_v(m, p + '.threshold_refusal_u')} | {_v(m, p + '.refusal_u_delta')} |")
        print("\nua.acc (lenient): " + ", ".join(f"{p} {_v(m, 'ua.acc')}" for p, m in metrics["protocols"].items()))
        print("r1.u_ref / r1.a_fu: " + ", ".join(f"{p} {_v(m, 'r1.u_ref')} / {_v(m, 'r1.a_fu')}"
                                                 for p, m in metrics["protocols"].items()))


if __name__ == "__main__":
    main(sys.argv[1:])
