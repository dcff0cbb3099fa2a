"""The TRL guard: the tested range is pyproject's; every private TRL name abstain overrides still has the signature and
the call sites abstain relies on; any other TRL version fails before anything trains, naming the tested range.

What the overrides do at run time is tested end to end elsewhere: the rewards, outcomes and TIAR bonus of
``_calculate_rewards`` / ``_generate_and_score_completions`` (tests/test_train_grpo.py, by hand on crafted groups),
their gathering and the loss scale of ``_compute_loss`` on 2 processes (tests/test_train_distributed.py),
``_generate_single_turn`` through vLLM (tests/test_vllm.py), the compact LM head (tests/test_train_lm_head.py).
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from abstain.schema import DataError
from abstain.train.trainers.trl_guard import OVERRIDDEN, TESTED_TRL, check_overrides, check_trl, overridden_signatures

ROOT = Path(__file__).resolve().parents[1]


def test_the_tested_range_is_pyprojects_and_holds_the_installed_trl():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert f"trl{TESTED_TRL}" in extras["train"]
    check_trl()  # the installed TRL passes


def test_every_overridden_trl_name_has_the_signature_abstain_was_written_against():
    assert overridden_signatures() == OVERRIDDEN
    check_overrides()  # what the GRPO trainer and the compact LM head check when they start
    from trl import GRPOTrainer

    from abstain.train.trainers.grpo import AbstainGRPOTrainer

    for dotted in OVERRIDDEN:  # and abstain's overrides take the same arguments
        owner, _, name = dotted.rpartition(".")
        if owner == "trl.GRPOTrainer":
            ours = inspect.signature(getattr(AbstainGRPOTrainer, name))
            assert list(ours.parameters) == list(inspect.signature(getattr(GRPOTrainer, name)).parameters), name


def test_the_trl_call_sites_the_overrides_rely_on_are_still_there():
    import trl.trainer.utils as trl_utils
    from trl import GRPOTrainer

    def source(fn) -> str:
        return inspect.getsource(fn)

    score = source(GRPOTrainer._generate_and_score_completions)
    # the rewards come from _calculate_rewards, gathered, before the advantages, which the output carries
    assert "self._calculate_rewards(" in score and score.index("self._calculate_rewards(") < score.index("advantages")
    assert '"advantages"' in score and '"completion_mask"' in score and "num_items_in_batch" in score
    assert "self._generate_single_turn(" in source(GRPOTrainer._generate)
    loss = source(GRPOTrainer._compute_loss)
    assert 'inputs["advantages"]' in loss and "num_items_in_batch" in loss and "self.loss_type" in loss
    assert "gather(" in source(GRPOTrainer._calculate_rewards)  # every process's rewards, in TRL's order
    assert "_use_triton(" in inspect.getsource(trl_utils)  # the fused LM head asks it where to project compactly
    import torch

    assert trl_utils._use_triton(torch.device("cpu")) in (True, False)


def test_another_trl_version_is_refused_naming_the_tested_range():
    with pytest.raises(DataError, match=r"TRL 1\.17\.0 is installed.*trl>=1\.16,<1\.17"):
        check_trl("1.17.0")
    with pytest.raises(DataError, match=r"TRL 1\.15\.2 is installed"):
        check_trl("1.15.2")


def test_a_wrong_installed_trl_fails_before_training(tmp_path):
    # an installed TRL that says 1.17.0 (its metadata first on the path; the code stays the real one)
    fake = tmp_path / "site"
    (fake / "trl-1.17.0.dist-info").mkdir(parents=True)
    (fake / "trl-1.17.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: trl\nVersion: 1.17.0\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "run"
    done = subprocess.run([str(Path(sys.executable).parent / "abstain"), "train", "sft", "--recipe", "tiny-sft",
                           "--out", str(out)], env=env, capture_output=True, text=True, timeout=300)
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode != 0
    assert "TRL 1.17.0 is installed" in said and "pip install 'trl>=1.16,<1.17'" in said, said[-2000:]
    assert not out.exists()  # nothing written, nothing trained
