"""The ``abstain_r1`` preset against the Abstain-R1 authors' reward, completion by completion.

``authors_reward`` below restates what their ``sum_reward.py`` (``compute_score`` of
github.com/leo-leung04/Abstain-R1, ``verl/verl/utils/reward_score/``) computes, in our own code:
``<thinking>`` prepended when missing; broken tags -> 0; otherwise ``r_format`` (a ``\\boxed{`` in the
answer section) + ``r_answer`` — answerable: -1 for "I don't know" in the answer section, else Math-Verify
of the section against the reference (1 / 0); unanswerable: 0.3 for a boxed "I don't know", plus 0.7 when
a clarification verifier accepts the rest of the section, which their code only asks when the item has a
reference clarification (no verifier: never). One departure: the reference is handed to Math-Verify in
``$…$``; their code parses it raw, and Math-Verify reads no expression from a raw "(1,-19)" or "-8 + 2i",
so their check can never credit those items (abstain's judge reads references as given). The same holds
for an unboxed answer section Math-Verify misreads when it is not delimited ("(1,-19)" written bare):
those few rows are counted apart and checked to be the only ones where the two part
(``unreadable_section``).

The corpus is real items of the shipped benchmarks — answerable GSM8K, UMWP, Abstain-Test-SUM and
synthesized originals; unanswerable UMWP and MiP-GSM8K (no gap), Abstain-Test-SUM (a free-text gap) and
synthesized twins (a structured gap) — each with the completions a model writes in this format: right,
wrong, refusing with or without a clarification, continuing after the prompt's ``<thinking>``, cut off by
the token limit, unboxed, untagged.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from math_verify import parse, verify

from abstain.data import load_benchmark
from abstain.judges import RuleJudge
from abstain.schema import Item
from abstain.synth import SynthConfig, generate_missing_premise
from abstain.train.rewards.presets import make_reward

TAGS = ("<thinking>", "</thinking>", "<answer>", "</answer>")
BOXED_IDK = re.compile(r"\\boxed\s*\{\s*I\s+don'?t\s+know\.?\s*\}", re.IGNORECASE)


def _tags_ok(text: str) -> bool:
    if any(text.count(t) != 1 for t in TAGS):
        return False
    at = [text.find(t) for t in TAGS]
    return at == sorted(at) and not text[at[1] + len("</thinking>"):at[2]].strip()


def _math_match(section: str, truth: str) -> bool:
    got, want = parse(section, raise_on_error=False), parse(truth, raise_on_error=False)
    return bool(got and want) and any(verify(g, w, raise_on_error=False) for g in got for w in want)


def authors_reward(item: Item, completion: str, verifier: Callable[[str], bool] | None = None) -> float:
    """The authors' score (format and answer weights 1.0); ``verifier(clarification)`` or none."""
    if completion and not completion.strip().startswith("<thinking>"):
        completion = "<thinking>\n" + completion
    if not _tags_ok(completion):
        return 0.0
    match = re.search(r"<answer>(.*?)</answer>", completion, re.DOTALL | re.IGNORECASE)
    section = match.group(1).strip() if match else ""
    r_format = 1.0 if "\\boxed{" in section else 0.0
    if item.label == "unanswerable":
        r_answer = 0.0
        if BOXED_IDK.search(section):
            r_answer += 0.3
            clarification = BOXED_IDK.sub("", section).strip()
            if clarification and verifier is not None and item.gap and verifier(clarification):
                r_answer += 0.7
    elif "I don't know" in section:
        r_answer = -1.0
    else:
        r_answer = 1.0 if _math_match(section, f"${item.answers[0]}$") else 0.0
    return r_format + r_answer


def _tagged(thinking: str, answer: str) -> str:
    return f"<thinking>\n{thinking}\n</thinking>\n<answer>\n{answer}\n</answer>"


def answerable_completions(item: Item) -> list[str]:
    right = item.answers[0]
    wrong = "987654321"
    steps = "I read the problem and work out each quantity in turn."
    return [
        _tagged(steps, f"\\boxed{{{right}}}"),
        _tagged(steps, f"The answer is \\boxed{{{right}}}."),
        _tagged(steps, f"\\boxed{{{wrong}}}"),
        _tagged("Something is missing, I think.", "\\boxed{I don't know.} What is the missing number?"),
        f"{steps}\n</thinking>\n<answer>\n\\boxed{{{right}}}\n</answer>",  # continues the prompt's <thinking>
        f"<thinking>\n{steps} First, the",  # cut by the token limit
        _tagged(steps, right),  # no box
        f"So the answer is \\boxed{{{right}}}.",  # no tags at all
        f"<thinking>{steps}</thinking> So: <answer>\\boxed{{{right}}}</answer>",  # text between the sections
    ]


def unanswerable_completions(item: Item) -> list[str]:
    name = str((item.model_extra or {}).get("gap_variable") or "missing quantity").replace("_", " ")
    return [
        _tagged("A needed fact is not given.", f"\\boxed{{I don't know.}} What is the {name}?"),
        _tagged("A needed fact is not given.", "\\boxed{I don't know.}"),
        _tagged("Hmm.", "\\boxed{I don't know.} Something about the weather is unclear."),
        _tagged("Let me guess.", "\\boxed{42}"),
        _tagged("Not enough information.", "I cannot answer this."),
        "A needed fact is not given.\n</thinking>\n<answer>\n\\boxed{I dont know} What is the value?\n</answer>",
        "<thinking>\nThe problem says",  # cut by the token limit
        "\\boxed{I don't know.}",  # no tags
    ]


def _items() -> list[Item]:
    picked: list[Item] = []
    for name, label in (("gsm8k", "answerable"), ("umwp", "answerable"), ("abstain_test_sum", "answerable"),
                        ("umwp", "unanswerable"), ("mip_gsm8k", "unanswerable"),
                        ("abstain_test_sum", "unanswerable")):
        picked += [i for i in load_benchmark(name) if i.label == label][:8]
    picked += list(generate_missing_premise(SynthConfig(n=16, seed=5)))
    return picked


@pytest.fixture(scope="module")
def corpus() -> list[tuple[Item, str]]:
    pairs = []
    for item in _items():
        texts = answerable_completions(item) if item.label == "answerable" else unanswerable_completions(item)
        pairs += [(item, text) for text in texts]
    return pairs


def test_the_corpus_covers_every_case(corpus):
    assert len(corpus) >= 400
    gapless = [i for i, _ in corpus if i.label == "unanswerable" and not i.gap]
    structured = [i for i, _ in corpus if (i.model_extra or {}).get("gap_variable")]
    assert len(gapless) >= 100 and len(structured) >= 50


def unreadable_section(item: Item, text: str) -> bool:
    """An unboxed answer section without ``$`` that Math-Verify reads otherwise than the same text in
    ``$…$`` (nothing from a bare "(1,-19)", only "-32" from "-32 + 32i \\sqrt{3}"): their check cannot
    credit it; abstain's judge compares it with the reference as written."""
    if item.label != "answerable" or not _tags_ok(text if text.startswith("<thinking>") else "<thinking>" + text):
        return False
    section = text.split("<answer>")[1].split("</answer>")[0].strip()
    return "\\boxed{" not in section and "$" not in section and not _math_match(section, f"${section}$")


def _differences(corpus, reward, verifier) -> list[str]:
    ours = reward.values(reward.score([i for i, _ in corpus], [t for _, t in corpus]))
    out, unreadable = [], 0
    for (item, text), value in zip(corpus, ours, strict=True):
        theirs = authors_reward(item, text, verifier(item, text) if verifier else None)
        if unreadable_section(item, text):
            unreadable += 1
            assert theirs == 0.0 and value in (0.0, 1.0), (item.id, value)  # no box: format 0; judged as written
            continue
        if value is None or abs(value - theirs) > 1e-9:
            out.append(f"{item.id}: ours {value}, theirs {theirs}: {text[:80]!r}")
    assert unreadable <= 8, unreadable  # a handful of LaTeX references, not a loophole
    return out


def test_without_a_clarification_verifier_it_is_the_authors_reward_on_every_completion(corpus):
    reward = make_reward("abstain_r1", protocol="clarify")
    reward.use_judge(RuleJudge(lenient_format=True, check_clarification=None))  # no judge_client_pool
    differences = _differences(corpus, reward, None)
    assert not differences, f"{len(differences)} of {len(corpus)} differ:\n" + "\n".join(differences[:20])


def test_with_the_rule_verifier_it_is_the_authors_reward_given_that_verdict(corpus):
    reward = make_reward("abstain_r1", protocol="clarify")
    verdicts = {(r.id, r.response): r.clarification_correct
                for r in reward.score([i for i, _ in corpus], [t for _, t in corpus])}

    def verifier(item: Item, text: str) -> Callable[[str], bool]:
        return lambda clarification: verdicts[(item.id, text)] is True

    differences = _differences(corpus, reward, verifier)
    assert not differences, f"{len(differences)} of {len(corpus)} differ:\n" + "\n".join(differences[:20])
    assert any(v is True for v in verdicts.values()) and any(v is False for v in verdicts.values())


def test_a_gapless_refusal_earns_the_refusal_reward_and_a_failed_judge_is_none():
    twin = next(i for i in load_benchmark("mip_gsm8k") if i.label == "unanswerable")
    refusal = _tagged("A number is missing.", "\\boxed{I don't know.} How far is one sprint?")
    reward = make_reward("abstain_r1", protocol="clarify")
    assert reward.values(reward.score([twin], [refusal])) == [pytest.approx(1.3)]  # format 1 + refusal 0.3

    def broken(row, pred):  # noqa: ANN001 - a clarification judge that fails
        raise TimeoutError("clarification judge timed out")

    reward.use_judge(RuleJudge(check_clarification=broken))
    assert reward.values(reward.score([twin], [refusal])) == [None]
