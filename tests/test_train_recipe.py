"""Recipes: every shipped one validates; overrides, errors that name the field, names vs folders."""

from __future__ import annotations

import pytest

from abstain.schema import DataError
from abstain.train.recipe import PipelineRecipe, load_recipe, shipped_recipes


@pytest.mark.parametrize("name", sorted(shipped_recipes()))
def test_every_shipped_recipe_validates(name):
    recipe = load_recipe(name)
    assert recipe.name == name
    if isinstance(recipe, PipelineRecipe):
        assert [stage.kind for _, stage in recipe.stage_recipes("runs/x")]


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
