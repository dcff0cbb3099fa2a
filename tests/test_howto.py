"""The how-to guides that run as written: docs/how-to/own-dataset.md and docs/how-to/own-reward.md.

own-dataset: the page's JSONL block is saved under the name the page gives it and evaluated with the page's own
`abstain eval` command (the bundled model, its four items, 160 tokens at most). own-reward: the page's
``my_rewards.py`` and its doctest run in a fresh interpreter (the preset is registered there, never in this test
process, whose shipped presets other modules' doctests list), and its recipe trains one GRPO step through the page's
`abstain train grpo` command on the small model of the bundled one's kind.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_readme import run_doctest  # a Markdown doctest in a fresh interpreter, offline

from abstain.schema import Item, ScoredRow, read_jsonl

ROOT = Path(__file__).resolve().parents[1]
HOWTO = ROOT / "docs" / "how-to"
ABSTAIN = str(Path(sys.executable).with_name("abstain"))


def fenced(page: Path, lang: str) -> list[str]:
    """The ```lang blocks of a page, in order."""
    return re.findall(rf"```{lang}\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.DOTALL)


def command(page: Path, prefix: str) -> list[str]:
    """The arguments of the page's one ```bash command that starts with ``prefix`` (continuation lines joined,
    the comment after it dropped)."""
    found = []
    for block in fenced(page, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith(prefix):
                found.append(shlex.split(line, comments=True))
    assert len(found) == 1, f"{page.name}: expected one command starting {prefix!r}, found {len(found)}"
    return found[0]


def block_starting(page: Path, lang: str, first_line: str) -> str:
    matches = [b for b in fenced(page, lang) if b.startswith(first_line)]
    assert len(matches) == 1, f"{page.name}: expected one ```{lang} block starting {first_line!r}"
    return matches[0]


def run_cli(args: list[str], cwd: Path, timeout: int) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ABSTAIN_NO_PROGRESS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", OMP_WAIT_POLICY="PASSIVE")
    assert args[0] == "abstain"
    return subprocess.run([ABSTAIN, *args[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


# ---- own-dataset.md ----------------------------------------------------------------------------------------

DATASET = HOWTO / "own-dataset.md"


def dataset_file(folder: Path) -> Path:
    """The page's JSONL block, saved under the file name the page's command reads."""
    args = command(DATASET, "abstain eval --model bundled --data ")
    path = folder / args[args.index("--data") + 1]
    (block,) = fenced(DATASET, "jsonl")
    path.write_text(block, encoding="utf-8")
    return path


def test_the_dataset_example_is_valid_and_its_table_names_every_item_field(tmp_path):
    items = read_jsonl(dataset_file(tmp_path), Item)
    assert {i.label for i in items} == {"answerable", "unanswerable"}
    assert any(i.model_extra for i in items), "the example shows that a column of your own is kept"
    table = re.findall(r"^\| `(\w+)` \|", DATASET.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert set(Item.model_fields) <= set(table), f"fields the table does not explain: {set(Item.model_fields) - set(table)}"
    used = {key for line in fenced(DATASET, "jsonl")[0].splitlines() for key in json.loads(line)}
    assert set(Item.model_fields) <= used, f"fields the example never shows: {set(Item.model_fields) - used}"


@pytest.mark.slow
def test_the_dataset_page_command_evaluates_its_items(tmp_path, bundled_model_dir):
    items = read_jsonl(dataset_file(tmp_path), Item)
    args = command(DATASET, "abstain eval --model bundled --data ")
    proc = run_cli(args, tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    n_a = sum(i.label == "answerable" for i in items)
    assert f"{n_a} answerable, {len(items) - n_a} unanswerable items" in " ".join(proc.stdout.split())
    out = tmp_path / args[args.index("--out") + 1]
    for name in ("config.json", "responses.jsonl", "scored.jsonl", "metrics.json", "report.md", "report.html"):
        assert (out / name).is_file(), f"the page promises {name} in the run folder"
    scored = {row.id: row for row in read_jsonl(out / "scored.jsonl", ScoredRow)}
    assert set(scored) == {i.id for i in items}
    for item in items:  # the item comes back whole, a column of your own included
        assert scored[item.id].model_extra == item.model_extra and scored[item.id].label == item.label
    metrics = json.loads((out / "metrics.json").read_text())["protocols"]["idk"]
    assert metrics["n.answerable"] == n_a
    assert {f"by_category.{i.category}.ua.acc" for i in items} <= set(metrics)


# ---- own-reward.md -----------------------------------------------------------------------------------------

REWARD = HOWTO / "own-reward.md"
PRESET_FILE = "# my_rewards.py"


def reward_folder(folder: Path) -> Path:
    """``my_rewards.py`` and ``my-grpo.yaml`` as the page has them, side by side."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "my_rewards.py").write_text(block_starting(REWARD, "python", PRESET_FILE), encoding="utf-8")
    (folder / "my-grpo.yaml").write_text(block_starting(REWARD, "yaml", "# my-grpo.yaml"), encoding="utf-8")
    return folder


def test_the_reward_page_example_scores_real_responses(tmp_path):
    (example,) = [b for b in fenced(REWARD, "python") if b.lstrip().startswith(">>>")]
    assert "import abstain, my_rewards" in example and "EXAMPLE_RESPONSES" in example
    proc = run_doctest(example, reward_folder(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


@pytest.mark.slow
def test_the_reward_page_recipe_trains_with_the_preset(tmp_path, small_model_dir):
    folder = reward_folder(tmp_path / "mine")
    args = command(REWARD, "abstain train grpo --recipe my-grpo.yaml")
    # one step of the 2-layer model of the bundled one's kind instead of two of the 135M model: the same path
    args += ["--set", f"model=hf:{small_model_dir}", "--set", "steps=1"]
    proc = run_cli(args, folder, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = folder / args[args.index("--out") + 1]
    step = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])
    assert -1.0 <= step["rewards/ternary_r/mean"] <= 1.0  # TRL logged the page's preset by its name
    recipe = json.loads((out / "config.json").read_text())["recipe"]
    assert recipe["reward"] == "ternary_r" and recipe["reward_modules"] == [str(folder / "my_rewards.py")]


def test_a_reward_module_that_is_missing_is_a_recipe_error(tmp_path):
    from abstain.schema import DataError
    from abstain.train import load_recipe

    with pytest.raises(DataError, match="reward_modules.*no such file"):
        load_recipe("tiny-grpo", ["reward_modules=[nowhere/my_rewards.py]"])
    with pytest.raises(DataError, match="cannot import 'mylab_no_such_rewards'"):
        load_recipe("tiny-grpo", ["reward_modules=[mylab_no_such_rewards]"])
