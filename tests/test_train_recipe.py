"""Recipes: every shipped one validates (and none warns); overrides, errors that name the field, names vs folders; a
LoRA recipe at a full fine-tune's learning rate warns once at load."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from abstain.schema import DataError
from abstain.train.recipe import PipelineRecipe, load_recipe, shipped_recipes

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: the recipes among the examples' YAML files (the others are launcher configs)
EXAMPLE_RECIPES = sorted(p for p in EXAMPLES.rglob("*.yaml") if "kind" in (yaml.safe_load(p.read_text()) or {}))


@pytest.fixture
def warnings_said():
    """What ``abstain.train.recipe`` logs at WARNING (caught on its own logger: the train CLI stops propagation)."""
    said: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    logger = logging.getLogger("abstain.train.recipe")
    handler = Catch(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield said
    finally:
        logger.removeHandler(handler)


@pytest.mark.parametrize("name", sorted(shipped_recipes()))
def test_every_shipped_recipe_validates(name, warnings_said):
    recipe = load_recipe(name)
    assert recipe.name == name
    if isinstance(recipe, PipelineRecipe):
        assert [stage.kind for _, stage in recipe.stage_recipes("runs/x")]
    assert warnings_said == []  # e.g. every LoRA recipe trains at a LoRA-sized rate


@pytest.mark.parametrize("path", EXAMPLE_RECIPES, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_every_example_recipe_validates_without_a_warning(path, warnings_said):
    recipe = load_recipe(path)
    assert recipe.kind in ("grpo", "sft", "dpo", "pipeline") and warnings_said == []
    if path.name == "grpo-7b.yaml":  # LoRA r 64 at LoRA's rate, not the papers' full fine-tune 1e-6
        assert recipe.lora.r == 64 and recipe.learning_rate == 1.0e-5


def test_a_lora_recipe_below_lora_rates_warns_once_naming_the_field(warnings_said):
    load_recipe("tiny-grpo", ["learning_rate=1e-6"])
    (said,) = warnings_said
    assert "tiny-grpo.yaml (with --set learning_rate=1e-6): recipe field 'learning_rate': 1e-06 trains a LoRA" in said
    assert "about 1e-5 to 2e-4" in said and "LoRA Without Regret" in said
    load_recipe("tiny-grpo", ["learning_rate=1e-6", "lora=null"])  # a full fine-tune: the papers' rate
    load_recipe("tiny-grpo", ["learning_rate=5e-6"])  # the threshold itself is LoRA-sized
    assert len(warnings_said) == 1


def test_tracking_truncation_and_their_trl_twins():
    recipe = load_recipe("tiny-grpo", ["report_to=[tensorboard, wandb]", "run_name=arm-a"])
    assert recipe.report_to == ["tensorboard", "wandb"] and recipe.run_name == "arm-a"
    assert load_recipe("tiny-grpo").report_to == [] and load_recipe("tiny-grpo").run_name is None
    assert load_recipe("cpu-demo-sft").truncation == "error"  # the default: a row TRL would cut is refused
    for bad, message in (("trl={report_to: [wandb]}", "trl: report_to is a field of the recipe itself"),
                         ("report_to=[none]", "report_to: ['none']"),
                         ("report_to=[all, wandb]", "give trackers by name, [all]")):
        with pytest.raises(DataError, match=message.replace("[", r"\[")):
            load_recipe("tiny-grpo", [bad])
    with pytest.raises(DataError, match="trl: max_length is a field of the recipe itself"):
        load_recipe("tiny-sft", ["trl={max_length: 64}"])
    with pytest.raises(DataError, match="field 'truncation': Input should be 'error', 'drop' or 'cut'"):
        load_recipe("tiny-sft", ["truncation=keep"])


def test_overrides_reach_into_sections_and_are_read_as_yaml():
    r = load_recipe("tiny-grpo", ["data.synth.n=12", "lora={r: 4, alpha: 8}", "reward={aca: 1.0, format: 0.5}"])
    assert r.data.synth.n == 12 and r.lora.r == 4 and r.reward == {"aca": 1.0, "format": 0.5}


def test_a_folder_named_like_a_recipe_is_not_the_recipe(tmp_path, monkeypatch):
    (tmp_path / "cpu-demo").mkdir()  # e.g. the pipeline's own run folder
    monkeypatch.chdir(tmp_path)
    assert load_recipe("cpu-demo").kind == "pipeline"


@pytest.mark.parametrize(("text", "message"), [
    ("kind: grpo\n: : :", "not valid YAML"),
    ("- a\n- b\n", "a recipe is a mapping of fields"),
    ("kind: ppo\n", "field 'kind': must be one of grpo, sft, dpo, pipeline"),
    ("kind: sft\nsteps: 1\nlearning_rate: 1e-4\nbatch_size: 2\n", "exactly one of data"),
    ("kind: grpo\ndata: {synth: {n: 4, seed: 1}}\nsteps: 1\nlearning_rate: 1e-5\nbatch_size: 8\nadvantage: ppo\n",
     "field 'advantage': Input should be 'grpo', 'tiar' or 'coupled'"),
    ("kind: grpo\ndata: {synth: {n: 4, seed: 1}}\nsteps: 1\nepochs: 2\nlearning_rate: 1e-5\nbatch_size: 8\n",
     "exactly one of steps or epochs"),
    ("kind: grpo\ndata: {synth: {n: 4, seed: 1}}\nsteps: 1\nlearning_rate: 1e-5\nbatch_size: 8\nlearning_rat: 1\n",
     "field 'learning_rat': Extra inputs are not permitted"),
])
def test_bad_recipes_name_the_file_and_the_field(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(DataError) as err:
        load_recipe(str(path))
    assert str(path) in str(err.value) and message in str(err.value)


def test_unknown_recipe_names_say_what_is_shipped():
    with pytest.raises(DataError, match="unknown recipe 'nope'; shipped: .*tiny-grpo"):
        load_recipe("nope")
    with pytest.raises(DataError, match="--set 'steps': expected key=value"):
        load_recipe("tiny-grpo", ["steps"])


def test_validation_may_name_a_suite_training_may_not():
    recipe = load_recipe("tiny-grpo", ["validation={suite: heldout, limit: 8, every: 2, final: best}", "save_steps=2",
                                       "dynamic_sampling=refill"])
    assert recipe.validation.suite == "heldout" and recipe.validation.final == "best"
    assert recipe.dynamic_sampling == "refill" and recipe.max_generation_batches == 4
    with pytest.raises(DataError, match=r"data.suite 'heldout' is an evaluation suite"):
        load_recipe("tiny-grpo", ["data={suite: heldout}"])
    with pytest.raises(DataError, match=r"validation.every \(3\) must be a multiple of save_steps \(2\)"):
        load_recipe("tiny-grpo", ["validation={suite: heldout, every: 3, final: best}", "save_steps=2"])
    with pytest.raises(DataError, match=r"dynamic_sampling"):
        load_recipe("tiny-grpo", ["dynamic_sampling=sometimes"])
