"""The resumable run directory: append, cut a half-written line, refuse another config."""

from __future__ import annotations

import json

import pytest

from abstain.records.runs import RESPONSES, ConfigMismatch, RunDir, row_key
from abstain.schema import DataError, ResponseRow, read_jsonl


@pytest.fixture()
def rows(fixtures_dir):
    return read_jsonl(fixtures_dir / "real_responses.jsonl", ResponseRow)


def test_appended_rows_read_back(tmp_path, rows):
    run = RunDir(tmp_path)
    with run.appender(RESPONSES) as out:
        for row in rows:
            out.append(row)
    assert out.count == len(rows)
    back = run.read_rows(RESPONSES, ResponseRow)
    assert [row_key(r) for r in back] == [row_key(r) for r in rows]
    assert back[3].response == rows[3].response


@pytest.mark.parametrize("cut", [1, 17, -2])
def test_half_written_last_line_is_cut_then_redone_not_duplicated(tmp_path, rows, cut):
    run = RunDir(tmp_path)
    path = tmp_path / RESPONSES
    with run.appender(RESPONSES) as out:
        for row in rows[:5]:
            out.append(row)
    whole = path.read_bytes()
    line = (json.dumps(rows[5].model_dump(mode="json"), ensure_ascii=False) + "\n").encode()
    path.write_bytes(whole + line[:cut])  # the crash: part of row 6, no newline
    back = run.read_rows(RESPONSES, ResponseRow)
    assert [r.id for r in back] == [r.id for r in rows[:5]]
    assert path.read_bytes() == whole  # the tail is gone from the file too
    with run.appender(RESPONSES) as out:
        out.append(rows[5])
    again = run.read_rows(RESPONSES, ResponseRow)
    assert [r.id for r in again] == [r.id for r in rows[:6]]
    assert len(path.read_bytes().splitlines()) == 6


def test_a_last_line_of_garbage_is_dropped_but_a_bad_middle_line_is_an_error(tmp_path, rows):
    run = RunDir(tmp_path)
    path = tmp_path / RESPONSES
    with run.appender(RESPONSES) as out:
        out.append(rows[0])
    good = path.read_bytes()
    path.write_bytes(good + b"\x00\x00\x00\n")  # zeros after a power cut
    assert [r.id for r in run.read_rows(RESPONSES, ResponseRow)] == [rows[0].id]
    assert path.read_bytes() == good
    path.write_bytes(good + b'{"id": "x"}\n' + good)
    with pytest.raises(DataError, match=rf"{RESPONSES}:2:"):
        run.read_rows(RESPONSES, ResponseRow)


def test_duplicates_keep_the_first_or_the_last_row(tmp_path, rows):
    run = RunDir(tmp_path)
    twin = rows[0].model_copy(update={"response": "later"})
    with run.appender(RESPONSES) as out:
        out.append(rows[0])
        out.append(twin)
    (back,) = run.read_rows(RESPONSES, ResponseRow)
    assert back.response == rows[0].response
    (last,) = run.read_rows(RESPONSES, ResponseRow, keep="last")  # e.g. a judgment retried later
    assert last.response == "later"


def test_config_must_match_to_resume(tmp_path):
    run = RunDir(tmp_path / "run")
    config = {"model": "bundled", "protocols": ("idk", "aca"), "generation": {"max_tokens": 16, "seed": 0}}
    run.prepare(config)
    run.prepare(json.loads(json.dumps(config)))  # the same config (tuples read back as lists) resumes
    changed = {**config, "generation": {"max_tokens": 32, "seed": 0}, "protocols": ("idk",)}
    with pytest.raises(ConfigMismatch) as err:
        run.prepare(changed)
    message = str(err.value)
    assert "generation.max_tokens: 16 in config.json, 32 now" in message
    assert "protocols" in message and "--out" in message
    assert json.loads((tmp_path / "run" / "config.json").read_text())["generation"]["max_tokens"] == 16


def test_missing_files_read_as_empty(tmp_path):
    assert RunDir(tmp_path / "new").read_rows(RESPONSES, ResponseRow) == []


def test_rows_without_a_config_are_not_adopted(tmp_path, rows):
    run = RunDir(tmp_path)
    with run.appender(RESPONSES) as out:
        out.append(rows[0])
    with pytest.raises(ConfigMismatch, match="no config.json"):
        run.prepare({"model": "m"})
    assert not (tmp_path / "config.json").exists()
