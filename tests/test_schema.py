"""The interchange format: validation with file:line errors, pass-through fields, atomic writes."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.schema import DataError, Item, ResponseRow, read_jsonl, write_jsonl


def _umwp_rows(benchmarks_dir, n):
    lines = (benchmarks_dir / "umwp" / "StandardDataset.jsonl").read_text().splitlines()[:n]
    return [json.loads(line) for line in lines]


def test_real_umwp_rows_validate(tmp_path, benchmarks_dir):
    path = tmp_path / "items.jsonl"
    with path.open("w") as f:
        for r in _umwp_rows(benchmarks_dir, 5):
            item = {"id": r["id"], "question": r["question"], "answers": r["answer"],
                    "label": "answerable" if r["answerable"] else "unanswerable", "source": r["source"]}
            f.write(json.dumps(item) + "\n")
    items = read_jsonl(path, Item)
    assert [i.id for i in items] == ["1", "2", "3", "4", "5"]
    assert items[0].answers == ["460"]  # 460.0 in the file


def test_malformed_lines_name_file_and_line(tmp_path):
    good = json.dumps({"id": "a", "question": "q", "answers": [], "label": "unanswerable"})
    cases = {
        "{not json": "invalid JSON",
        json.dumps({"id": "b", "question": "q", "answers": [], "label": "maybe"}): "field 'label'",
        json.dumps({"id": "c", "answers": [], "label": "answerable"}): "field 'question'",
        json.dumps({"id": "d", "question": "q", "answer": ["1"], "label": "answerable"}): "rename it to 'answers'",
    }
    for bad, message in cases.items():
        path = tmp_path / "bad.jsonl"
        path.write_text(good + "\n\n" + bad + "\n")
        with pytest.raises(DataError) as err:
            read_jsonl(path, Item)
        assert f"{path}:3:" in str(err.value) and message in str(err.value)


def test_unknown_fields_survive_a_round_trip(tmp_path):
    row = ResponseRow(id="1", question="q", answers=["2"], label="answerable", response="r", model="m",
                      pair_id="p7", graph={"target": "x"})
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, [row])
    again = read_jsonl(path, ResponseRow)[0]
    assert again.model_dump()["pair_id"] == "p7" and again.model_dump()["graph"] == {"target": "x"}


def test_write_is_atomic_when_the_producer_fails(tmp_path):
    path = tmp_path / "out.jsonl"
    write_jsonl(path, [Item(id="1", question="q", answers=[], label="unanswerable")])
    before = path.read_bytes()

    def broken():
        yield Item(id="2", question="q", answers=[], label="unanswerable")
        raise RuntimeError("crash midway")

    with pytest.raises(RuntimeError):
        write_jsonl(path, broken())
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_score_command_rejects_bad_input_without_writing(tmp_path, fixtures_dir):
    lines = (fixtures_dir / "real_responses.jsonl").read_text().splitlines()
    lines[4] = lines[4].replace('"label": "answerable"', '"label": "yes"')
    src = tmp_path / "responses.jsonl"
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "scored.jsonl"
    result = CliRunner().invoke(app, ["score", "-i", str(src), "-o", str(out)])
    assert result.exit_code == 2
    assert f"{src}:5:" in result.output and "label" in result.output
    assert not out.exists()


def test_written_files_get_the_usual_permissions(tmp_path):
    import os

    path = tmp_path / "out.jsonl"
    write_jsonl(path, [Item(id="1", question="q", answers=[], label="unanswerable")])
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask
