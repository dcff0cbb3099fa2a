"""Inside a Ray worker, as veRL's trainer runs its workers: ``import verl`` registers ``tiar`` / ``tiar_coupled``
through the entry point (or, with plugins off, through the documented ``VERL_USE_EXTERNAL_MODULES`` fallback
forwarded in the runtime environment), and veRL's own reward loading (``load_reward_manager`` with the
example's ``custom_reward_function``, ``pkg://abstain.integrations.verl.reward``) scores real completions of
an exported item there.

A local Ray cluster on this CPU (2 CPUs, no dashboard); each case runs in workers started with its own runtime
environment, so no worker reuses a process that imported veRL under another setting.
"""

from __future__ import annotations

import os

import pytest

verl = pytest.importorskip("verl")
ray = pytest.importorskip("ray")
pytestmark = pytest.mark.verl

FALLBACK = "abstain.integrations.verl.plugin"


@pytest.fixture(scope="module")
def cluster():
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    clean = {k: v for k, v in os.environ.items() if k.startswith("VERL_USE_EXTERNAL")}
    for key in clean:
        os.environ.pop(key)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    import sys

    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import a test module by name
    try:
        yield
    finally:
        ray.shutdown()
        os.environ.update(clean)


def _in_worker(config) -> dict:
    """What a Ray worker sees: the estimators veRL's registry holds after ``import verl``, and the scores
    veRL's reward manager gives three completions of the first answerable exported item."""
    import numpy as np
    import pandas as pd
    import torch
    from transformers import AutoTokenizer

    import verl  # noqa: F401 - what veRL's own workers import first
    from verl import DataProto
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY
    from verl.trainer.ppo.reward import load_reward_manager

    from abstain.backends.bundled import gguf_path

    names = sorted(k for k in ADV_ESTIMATOR_REGISTRY if k.startswith("tiar"))
    path = gguf_path()
    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    manager = load_reward_manager(config, tokenizer)
    rows = pd.read_parquet(config.data.train_files[0] if not isinstance(config.data.train_files, str)
                           else config.data.train_files)
    row = next(r for r in rows.itertuples() if list(r.reward_model["ground_truth"]))
    answer = list(row.reward_model["ground_truth"])[0]
    scores = {}
    for name, text in {"right": f"So the answer is \\boxed{{{answer}}}.", "wrong": "\\boxed{123456789}",
                       "abstain": "A premise is missing. \\boxed{I don't know.}"}.items():
        ids = torch.tensor(tokenizer(text, add_special_tokens=False)["input_ids"])
        data = DataProto.from_dict(
            tensors={"responses": ids[None], "attention_mask": torch.ones(1, len(ids), dtype=torch.long)},
            non_tensors={"data_source": np.array([row.data_source], dtype=object),
                         "reward_model": np.array([row.reward_model], dtype=object),
                         "extra_info": np.array([dict(row.extra_info)], dtype=object)})
        out = manager.loop.run_until_complete(manager.run_single(data))
        scores[name] = (out["reward_score"], out["reward_extra_info"]["outcome"])
    return {"pid": os.getpid(), "names": names, "scores": scores,
            "estimator_module": getattr(ADV_ESTIMATOR_REGISTRY.get("tiar"), "__module__", None)}


def _run(config, **env: str) -> dict:
    task = ray.remote(num_cpus=1)(_in_worker).options(runtime_env={"env_vars": env} if env else None)
    return ray.get(task.remote(config), timeout=300)


EXPECTED = {"right": (1.0, "correct"), "wrong": (-1.0, "wrong"), "abstain": (0.0, "abstain")}


def test_a_ray_worker_registers_the_estimators_and_scores_with_verls_reward_loading(cluster, config):
    got = _run(config)
    assert got["pid"] != os.getpid()  # another process: a Ray worker
    assert got["names"] == ["tiar", "tiar_coupled"]
    assert got["estimator_module"] == "abstain.integrations.verl.estimators"
    assert got["scores"] == EXPECTED  # ternary: +1 / -1 / 0, through veRL's naive reward manager


def test_in_a_ray_worker_the_fallback_registers_what_the_plugins_would(cluster, config):
    off = _run(config, VERL_USE_EXTERNAL_PLUGINS="none")
    assert off["names"] == []  # so the entry point is what registers in the first test
    assert off["scores"] == EXPECTED  # the reward is loaded by path, plugins or not
    fallback = _run(config, VERL_USE_EXTERNAL_PLUGINS="none", VERL_USE_EXTERNAL_MODULES=FALLBACK)
    assert fallback["names"] == ["tiar", "tiar_coupled"] and fallback["pid"] != off["pid"]
    assert fallback["scores"] == EXPECTED
