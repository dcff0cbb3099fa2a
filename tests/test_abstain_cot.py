"""The Abstain-R1 authors' cold-start set, shipped with its notice, loaded under the clarify prompt."""

from __future__ import annotations

import json
import logging
from collections import Counter

import pytest

from abstain.protocols import get_protocol
from abstain.schema import Item
from abstain.data import files
from abstain.train.data.abstain_cot import ABSTAIN_COT_SUBSETS, abstain_cot_dir, box_answer, load_abstain_cot

# line counts of the shipped files (wc -l), per subset: (answerable, unanswerable)
LINES = {"alcuna": (100, 71), "bbq": (100, 24), "falseqa": (97, 93), "gsm8k_abstain": (100, 76),
         "known_unknown_questions": (96, 76), "mediq": (100, 73), "moral_choice": (100, 95), "musique": (99, 74),
         "qaqa": (99, 92), "squad2": (99, 88), "umwp": (974, 760)}


def test_shipped_with_source_and_readme():
    folder = abstain_cot_dir()
    source = (folder / "SOURCE.txt").read_text()
    assert "Apache-2.0" in source and "RESEARCH USE ONLY" in source and "b75c735" in source
    assert (folder / "README.Abstain-R1.md").exists()
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == sorted(ABSTAIN_COT_SUBSETS)


def test_all_rows_load_under_the_clarify_prompt(caplog, monkeypatch):
    monkeypatch.setattr(files, "NOTIFIED", set())
    with caplog.at_level(logging.WARNING, logger="abstain.train.data.abstain_cot"):
        cot = load_abstain_cot(allow=("all",))  # every row, evaluation questions too (tests/test_guard.py)
    assert "research use only" in caplog.text
    counts = Counter((r.source.split("/")[1], r.label) for r in cot.rows)
    assert counts == {(s, label): n for s, ns in LINES.items() for label, n in zip(("answerable", "unanswerable"), ns)}
    assert len({r.id for r in cot.rows}) == 3486
    first = json.loads((abstain_cot_dir() / "squad2" / "squad2_answerable_clean_deepseek_filtered.jsonl")
                       .read_text().splitlines()[0])
    row = next(r for r in cot.rows if r.id == "abstain_cot-squad2-a0000")
    item = Item(id=row.id, question=first["question"], answers=[], label="answerable")
    assert row.prompt == get_protocol("clarify").messages(item)
    assert row.completion == [{"role": "assistant", "content": first["answer"]}]  # the authors' text, unchanged


def test_scorer_reads_every_refusal_and_no_unboxed_answer():
    cot = load_abstain_cot(allow=("all",))
    # every unanswerable completion boxes "I don't know."; no answerable one boxes its answer
    assert len(cot.inconsistent) == sum(a for a, _ in LINES.values()) == 1964
    assert all("-a" in i for i in cot.inconsistent)
    boxed = load_abstain_cot(box_answers=True, drop_inconsistent=True, allow=("all",))
    assert boxed.dropped == len(boxed.inconsistent) == 308
    assert len(boxed.rows) == 3486 - 308


def test_box_answer_and_subset_choice():
    assert box_answer("<answer>\nYes\n</answer>") == "<answer>\n\\boxed{Yes}\n</answer>"
    long = "<answer>\nFirst 2 + 2 = 4, so it is four.\n\n4.0\n</answer>"
    assert box_answer(long) == "<answer>\nFirst 2 + 2 = 4, so it is four.\n\n\\boxed{4.0}\n</answer>"
    sentence = "<answer>\nwe add them.\nTherefore, Frank took 72 days to finish the whole book.\n</answer>"
    assert box_answer(sentence) == sentence  # no short last line: left alone
    without = tuple(s for s in ABSTAIN_COT_SUBSETS if s not in ("umwp", "gsm8k_abstain"))
    assert len(load_abstain_cot(subsets=without, allow=("all",)).rows) == 3486 - 1734 - 176
    guarded = load_abstain_cot(subsets=without)  # their evaluation questions left out, counted
    assert len(guarded.rows) == 3486 - 1734 - 176 - guarded.guard.removed and guarded.guard.removed > 0
    with pytest.raises(ValueError, match="unknown Abstain-CoT subsets \\['world_sense'\\]"):
        load_abstain_cot(subsets=("world_sense",))


def test_sft_data_cli_exports_it(tmp_path):
    from typer.testing import CliRunner

    from abstain.cli import app
    from abstain.schema import read_jsonl
    from abstain.train.data.sft_data import SFTRow

    out = tmp_path / "cot.jsonl"
    args = ["sft-data", "--abstain-cot", "--cot-subsets", "bbq,squad2", "--box-answers", "--out", str(out),
            "--no-tokens"]
    result = CliRunner().invoke(app, [*args, "--protocol", "clarify"])
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out, SFTRow)
    expected = load_abstain_cot(("bbq", "squad2"), box_answers=True)  # what the guard leaves of them
    assert Counter(r.target_kind for r in rows) == Counter(r.target_kind for r in expected.rows)
    assert len(rows) == 124 + 187 - expected.guard.removed and "left out Abstain-CoT" in " ".join(result.output.split())
    assert "research use only" in " ".join(result.output.split())
    wrong = CliRunner().invoke(app, [*args, "--protocol", "idk"])
    assert wrong.exit_code == 2 and "use --protocol clarify" in wrong.output
