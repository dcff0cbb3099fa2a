"""`abstain export verl`: rows in veRL's RL dataset schema, the training mix, and the item round trip."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from typer.testing import CliRunner

from abstain.cli import app
from abstain.data.suites import load_suite
from abstain.integrations.verl.dataset import item_from_verl, mix_items, verl_row, verl_rows, write_rows
from abstain.protocols import get_protocol
from abstain.schema import DataError, Item, read_jsonl, write_jsonl
from abstain.train.data.mix import MixConfig, training_items


@pytest.fixture(scope="module")
def quick() -> list[Item]:
    return load_suite("quick").items


def _pair(item: Item) -> str:
    return str(item.meta.get("pair_id") or item.id)


def test_row_layout_for_a_synthesized_twin():
    item = Item(id="s-1-u", question="The blanket is paid in 11 equal installments. What does it cost?", answers=[],
                label="unanswerable", category="reasoning", perturbation="numerical_value_removal",
                gap="The installment is not given.", source="synth/missing-premise",
                meta={"pair_id": "s-1"}, gap_variable="installment", graph={"target": "blanket_price"})
    row = verl_row(item, "clarify", index=7)
    assert row["data_source"] == "abstain/synth"  # never a veRL built-in name: no silent default scorer
    assert row["prompt"] == get_protocol("clarify").messages(item)
    assert row["ability"] == "reasoning"
    assert row["reward_model"] == {"style": "rule", "ground_truth": []}
    extra = row["extra_info"]
    assert (extra["index"], extra["id"], extra["label"], extra["gap_variable"], extra["protocol"]) == (
        7, "s-1-u", "unanswerable", "installment", "clarify")
    back = item_from_verl(extra)
    assert back == item and back.model_extra == {"gap_variable": "installment", "graph": {"target": "blanket_price"}}


def test_every_quick_item_round_trips(quick):
    rows = verl_rows(quick, "idk")
    assert [r["extra_info"]["index"] for r in rows] == list(range(len(quick)))
    assert [item_from_verl(r["extra_info"]) for r in rows] == quick
    with pytest.raises(DataError, match="not written by `abstain export verl`"):
        item_from_verl({"index": 0})


@pytest.mark.parametrize("ratio", [0.0, 0.3, 0.5, 1.0])
def test_mix_has_the_ratio_and_one_row_per_problem(quick, ratio):
    mix = mix_items(quick, ratio, seed=0)
    unanswerable = sum(i.label == "unanswerable" for i in mix)
    assert unanswerable == round(ratio * len(mix))
    assert max(Counter(_pair(i) for i in mix).values()) == 1  # never an item and its twin
    order = {i.id: k for k, i in enumerate(quick)}
    assert [order[i.id] for i in mix] == sorted(order[i.id] for i in mix)  # items keep their order


def test_mix_is_seeded_and_sized(quick):
    assert [i.id for i in mix_items(quick, 0.3, seed=5)] == [i.id for i in mix_items(quick, 0.3, seed=5)]
    assert {i.id for i in mix_items(quick, 0.3, seed=5)} != {i.id for i in mix_items(quick, 0.3, seed=6)}
    assert len(mix_items(quick, 0.3, seed=0, n=20)) == 20
    assert mix_items(quick, None) == quick
    with pytest.raises(ValueError, match=r"cannot draw 500 rows with 30% unanswerable.*at most 86 rows"):
        mix_items(quick, 0.3, n=500)
    answerable = [i for i in quick if i.label == "answerable" and "pair_id" not in i.meta]
    with pytest.raises(ValueError, match=r"0 unanswerable-only problems and 0 pairs"):
        mix_items(answerable, 0.3)


def _export(tmp_path, *args):
    return CliRunner().invoke(app, ["export", "verl", *args], catch_exceptions=False)


def test_cli_writes_parquet_with_a_fixed_schema(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "train.parquet"
    # certified synthesis written to a file (every shipped suite holds held-out questions: test_guard.py)
    data = tmp_path / "pairs.jsonl"
    pairs = training_items(MixConfig(n=200, seed=8, pair_twins=True, unanswerable_ratio=0.5))
    write_jsonl(data, pairs)
    r = _export(tmp_path, "--data", str(data), "--protocol", "attribution", "--unanswerable-ratio", "0.3",
                "--seed", "1", "--out", str(out))
    assert r.exit_code == 0, r.output
    table = pq.read_table(out)
    want = mix_items(pairs, 0.3, seed=1)
    assert table.num_rows == len(want) and f"{sum(i.label == 'unanswerable' for i in want)} unanswerable" in r.output
    extra = table.schema.field("extra_info").type
    assert str(extra.field("gap").type) == "string" and str(extra.field("index").type) == "int64"
    rows = table.to_pylist()
    assert [item_from_verl(row["extra_info"]) for row in rows] == want
    assert rows[0]["prompt"] == get_protocol("attribution").messages(want[0])
    # the reward's always-abstain margin on this mix, as abstain train grpo says it for its own
    profile = json.loads((tmp_path / "train.parquet.reward_profile.json").read_text())
    assert profile["reward"] == "ternary" and profile["unanswerable_share"] == pytest.approx(0.3, abs=0.01)
    assert "warning: always-abstain is optimal" in " ".join(r.output.split())  # ternary at p = 0.05
    r = _export(tmp_path, "--data", str(data), "--protocol", "idk", "--reward", "idk_binary", "--unanswerable-ratio",
                "0", "--out", str(out))  # answerable items only, where a refusal earns what a wrong answer does
    assert r.exit_code == 0 and "always-abstain is optimal" not in r.output, r.output


def test_cli_jsonl_from_a_file_and_its_errors(tmp_path):
    data = tmp_path / "items.jsonl"
    write_jsonl(data, training_items(MixConfig(n=10, seed=9)))
    out = tmp_path / "train.jsonl"
    assert _export(tmp_path, "--data", str(data), "--protocol", "idk", "--out", str(out)).exit_code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [item_from_verl(row["extra_info"]) for row in rows] == read_jsonl(data, Item)
    r = _export(tmp_path, "--data", str(data), "--suite", "quick", "--protocol", "idk", "--out", str(out))
    assert r.exit_code == 2 and "exactly one of --suite NAME or --data FILE" in r.output
    r = _export(tmp_path, "--data", str(data), "--protocol", "idk", "--out", str(tmp_path / "train.csv"))
    assert r.exit_code == 2 and "must end in .parquet or .jsonl" in r.output
    data.write_text('{"id": 1, "question": "q", "answers": [], "label": "maybe"}\n')
    r = _export(tmp_path, "--data", str(data), "--protocol", "idk", "--out", str(out))
    assert r.exit_code == 2 and "items.jsonl:1:" in r.output and "field 'label'" in r.output


def test_write_rows_refuses_nothing(tmp_path):
    with pytest.raises(ValueError, match="no rows"):
        write_rows([], tmp_path / "x.parquet")
