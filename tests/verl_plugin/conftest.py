"""veRL tests: `make test-verl` runs them in .venv-verl (veRL 0.9.1, transformers < 5.11, Ray).

Where veRL is missing (the main .venv) every module here skips. `make test-verl` sets ABSTAIN_REQUIRE_VERL=1:
then veRL must import, or the run fails here instead of skipping.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

if os.environ.get("ABSTAIN_REQUIRE_VERL") == "1":
    import verl  # noqa: F401 - a broken veRL install fails the run


def pytest_configure(config) -> None:
    # veRL announces every optional engine it lacks (megatron, mindspeed, automodel) on import
    config.addinivalue_line("filterwarnings", "ignore:.* engine is not available:UserWarning")


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "verl"


@pytest.fixture(scope="session")
def example_overrides():
    """``(data folder, **env) -> overrides``: examples/verl/run_grpo_tiar.sh's arguments to veRL's main_ppo,
    exactly as it would pass them."""

    def overrides(data: Path, **env: str) -> list[str]:
        done = subprocess.run(["bash", str(EXAMPLE / "run_grpo_tiar.sh")], capture_output=True, text=True, check=True,
                              env={**os.environ, "LAUNCH": "printf %s\\n", "DATA": str(data), "MODEL": "/models/m",
                                   **env})
        return done.stdout.splitlines()

    return overrides


@pytest.fixture(scope="session")
def config(tmp_path_factory, example_overrides):
    """veRL 0.9.1's ``ppo_trainer`` config composed with the example's overrides, on exported synthetic data
    (``train.parquet``, ``val.parquet``)."""
    import verl
    from hydra import compose, initialize_config_dir
    from typer.testing import CliRunner

    from abstain.cli import app
    from abstain.schema import write_jsonl
    from abstain.train.data.mix import MixConfig, training_items

    data = tmp_path_factory.mktemp("data")
    write_jsonl(data / "train.jsonl", training_items(MixConfig(n=120, seed=2)))  # as prepare_data.sh: synthesis,
    write_jsonl(data / "val.jsonl", training_items(MixConfig(n=40, seed=3)))  # validation from another seed
    splits = {"train": ["--data", str(data / "train.jsonl")], "val": ["--data", str(data / "val.jsonl")]}
    for split, source in splits.items():
        r = CliRunner().invoke(app, ["export", "verl", *source, "--protocol", "idk",
                                     "--out", str(data / f"{split}.parquet")], catch_exceptions=False)
        assert r.exit_code == 0, r.output
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        return compose(config_name="ppo_trainer", overrides=example_overrides(data))
