"""One definition per suite: the registry (abstain.data.suites.REGISTRY) is what `abstain suites`, the CLI's --suite
help, the lm-eval task files and docs/suites.md say, and each entry's facts hold on the shipped data."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.cli.suites import markdown_table
from abstain.data.loaders import BENCHMARKS
from abstain.data.suites import BENCHMARK_LICENSES, REGISTRY, SUITES, load_suite, suite, suite_names
from abstain.schema import DataError, benchmark_of

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", list(REGISTRY))
def test_each_entry_holds_on_the_shipped_data(name):
    entry = REGISTRY[name]
    items = load_suite(name).items
    assert len(items) == entry.size
    assert {benchmark_of(i) for i in items} <= set(entry.benchmarks)
    assert entry.role in ("evaluation", "validation", "final") and entry.description
    assert entry.license and all(b in BENCHMARK_LICENSES for b in entry.benchmarks)


def test_every_benchmark_has_its_license_and_the_roles_are_the_papers_uses():
    assert set(BENCHMARK_LICENSES) == {*BENCHMARKS, "heldout"}
    assert suite_names("validation") == ["mip-gsm8k-val"]
    assert set(suite_names("final")) == {"heldout", "transfer", "abstain-test-sum"}
    assert list(SUITES) == list(REGISTRY)
    with pytest.raises(DataError, match="unknown suite 'nope'; choose one of quick, math"):
        suite("nope")


def test_the_cli_lists_the_registry_and_its_help_names_every_suite():
    listing = CliRunner().invoke(app, ["suites"], env={"COLUMNS": "80"})
    assert listing.exit_code == 0
    assert all(len(line) <= 80 for line in listing.output.splitlines())
    for entry in REGISTRY.values():
        assert entry.name in listing.output and f"{entry.size:,}" in listing.output
    for command in (["eval", "--help"], ["probe", "--help"]):
        text = " ".join(CliRunner().invoke(app, command, env={"COLUMNS": "200"}).output.split())
        assert all(name in text for name in REGISTRY), command
        assert "quick | math | full | heldout." not in text  # the old, stale list


def test_docs_suites_holds_the_generated_table():
    doc = (ROOT / "docs" / "suites.md").read_text()
    assert markdown_table() in doc, "paste `abstain suites --markdown` into docs/suites.md"


def test_the_lm_eval_task_files_are_the_registrys_suites():
    from abstain.integrations.lm_eval.task_yamls import task_name, task_yamls, tasks_dir
    from abstain.protocols import PROTOCOLS

    shipped = {p.name for p in tasks_dir().glob("abstain_*.yaml")}
    assert {f"{task_name(s, p)}.yaml" for s in REGISTRY for p in PROTOCOLS} <= shipped
    assert set(task_yamls()) >= {f"{task_name(s, p)}.yaml" for s in REGISTRY for p in PROTOCOLS}
