"""The paired-difference table of a comparison: each later run against the first, on the items both scored.

A comparison's Δ is the difference of two point estimates; whether it is more than noise needs the CI of
the difference with both runs resampled together (:mod:`abstain.metrics.paired`). This table gives it for
the headline metrics, per protocol, from the runs' ``scored.jsonl``; a run without one (or sharing no
item with the first) shows —.

Example::

    table = paired_table([load_run("runs/sft"), load_run("runs/grpo")])
    print(table.markdown())    # | r1.discrimination | +0.021 [-0.030, +0.071] | ...
"""

from __future__ import annotations

from collections.abc import Sequence

from abstain.records.runs import SCORED
from abstain.metrics.paired import PairedConfig, paired_delta
from abstain.report.tables import Cell, RunView, Table
from abstain.schema import ScoredRow, read_jsonl

__all__ = ["PAIRED_REPORT_KEYS", "paired_table"]

#: the metrics whose paired difference a comparison shows
PAIRED_REPORT_KEYS = ("ua.acc", "ua.avg_f1", "r1.a_acc", "r1.a_fu", "r1.u_ref", "r1.discrimination",
                      "r1.discrimination_within_count", "ua.du_discrimination", "ua.du_discrimination_within_count",
                      "aca.idk_score", "ab.f1")
CAPTION = ("B - A for each run B against the first run A, on the items both scored, with a paired bootstrap 95% CI "
           "(the same items drawn from both runs in every resample); a CI that excludes 0 is a difference the "
           "resampled items do not explain")


def _scored(run: RunView) -> list[ScoredRow] | None:
    path = run.path / SCORED
    return read_jsonl(path, ScoredRow) if path.exists() else None


def paired_table(runs: Sequence[RunView], config: PairedConfig | None = None) -> Table | None:
    """Paired differences against ``runs[0]`` per protocol (None for fewer than two runs)."""
    if len(runs) < 2:
        return None
    config = config or PairedConfig(resamples=int(runs[0].config.get("resamples") or 1000))
    rows = [_scored(run) for run in runs]
    header, columns = ["metric"], []
    for protocol in runs[0].protocols:
        first = None if rows[0] is None else [r for r in rows[0] if r.protocol == protocol]
        for run, scored in zip(runs[1:], rows[1:], strict=True):
            if protocol not in run.protocols:
                continue
            header.append(f"{protocol} · {run.label} − {runs[0].label}")
            mine = None if scored is None else [r for r in scored if r.protocol == protocol]
            columns.append(None if first is None or mine is None else
                           [paired_delta(first, mine, key, config) for key in PAIRED_REPORT_KEYS])
    body = []
    for i, key in enumerate(PAIRED_REPORT_KEYS):
        cells = []
        for deltas in columns:
            d = None if deltas is None else deltas[i]
            cells.append(Cell("—") if d is None or d.delta is None else
                         Cell(f"{d.delta:+.3f}", f"[{d.ci[0]:+.3f}, {d.ci[1]:+.3f}]" if d.ci else ""))
        body.append((key, cells))
    body.append(("shared items", [Cell("—" if d is None else str(d[0].n_items)) for d in columns]))
    return Table("Paired differences against the first run", header, body, CAPTION, "Paired differences")
