"""Run reports: ``metrics.json`` of a run, tables with CIs, the plots, Markdown/HTML, comparisons.

Example:
    >>> from abstain.report import report_tables, run_metrics, write_compare, write_report
    >>> callable(write_report) and callable(write_compare)
    True
"""

from abstain.report.generation import generation_differences, generation_settings
from abstain.report.plots import PLOTS, behavior_plot, f1_plot, refusal_accuracy_plot
from abstain.report.render import write_compare, write_report
from abstain.report.summary import outcome_label, run_metrics
from abstain.report.tables import Cell, Column, RunView, Table, columns, load_run, metric_table, report_tables

__all__ = [
    "PLOTS",
    "Cell",
    "Column",
    "RunView",
    "Table",
    "behavior_plot",
    "columns",
    "f1_plot",
    "generation_differences",
    "generation_settings",
    "load_run",
    "metric_table",
    "outcome_label",
    "refusal_accuracy_plot",
    "report_tables",
    "run_metrics",
    "write_compare",
    "write_report",
]
