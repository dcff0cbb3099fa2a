"""abstain.train.trainers.lm_head: TRL's fused LM head on a CPU scores only the labelled positions, with the same values."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from abstain.train.trainers.lm_head import compact_lm_head  # noqa: E402


def _fused(model, ids, labels):
    model.zero_grad()
    out = model(input_ids=ids, labels=labels, fused_lm_head=True)
    out.loss.backward()
    grad = model.get_output_embeddings().weight.grad.clone()
    return out.log_probs.detach(), out.entropy.detach(), grad


@pytest.mark.slow
def test_the_compact_head_gives_the_same_log_probs_and_gradients_and_projects_fewer_rows(bundled_model_dir):
    import trl.kernels.chunked_logprob as kernel
    from transformers import AutoModelForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(str(bundled_model_dir), dtype=torch.float32)
    add_fused_lm_head(model, outputs=("log_probs", "entropy"))
    ids = torch.randint(0, model.config.vocab_size, (3, 24))
    labels = ids.clone()
    labels[:, :17] = -100  # a prompt of 17 tokens, 7 completion tokens
    labels[2, 20:] = -100  # one completion ends early (padding)

    rows: list[int] = []
    apply = kernel.ChunkedLogProbFunction.apply

    def counting(hidden, *args):  # type: ignore[no-untyped-def]
        rows.append(hidden.shape[0])
        return apply(hidden, *args)

    kernel.ChunkedLogProbFunction.apply = counting  # type: ignore[method-assign]
    import trl.trainer.utils as trl_utils

    trl_utils._ChunkedLogProbFunction.apply = counting  # type: ignore[attr-defined]
    try:
        full = _fused(model, ids, labels)
        with compact_lm_head() as opened:
            compact = _fused(model, ids, labels)
            with compact_lm_head() as nested:  # already open: a no-op
                assert not nested
        after = _fused(model, ids, labels)
    finally:
        kernel.ChunkedLogProbFunction.apply = apply  # type: ignore[method-assign]
        trl_utils._ChunkedLogProbFunction.apply = apply  # type: ignore[attr-defined]
    assert opened
    # every shifted position by default; only the 7 + 7 + 3 labelled ones with the compact head; restored after
    assert rows == [3 * 23, 17, 3 * 23]
    for a, b in zip(full, compact, strict=True):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)
    assert compact[2].abs().sum() > 0  # the gradient reached the head
    for a, b in zip(full, after, strict=True):
        assert torch.equal(a, b)
