"""Three judges' abstention verdicts on the same responses, per dataset: AbstentionBench's grader against abstain's.

The responses are runs of ``abstain eval --protocol plain --judge abstentionbench`` (the question alone, as
AbstentionBench asks; its grader, read from the installed port, decided each row's abstention). On exactly those
responses, with the same judge model, this asks abstain's own ``ABSTENTION`` prompt
(:func:`abstain.judges.detect_abstention`) and runs the rule judge (``abstain score --judge rule``: an abstention is
:func:`abstain.outcomes.is_abstention` of the rule-judged row), then reports each judge's agreement with the grader
and Cohen's kappa (:func:`abstain.evaluation.audit.agreement`: a verdict a judge could not give counts as a
disagreement) per dataset (:func:`abstain.schema.dataset_of`: AbstentionBench's grouping) and over all rows.

    python bench/judge_agreement.py runs/agree-freshqa runs/agree-lite \\
        --judge-base-url http://127.0.0.1:8011/v1 --judge-model bundled

Writes ``bench/results/judge_agreement.json`` and prints a markdown table (docs/judges.md quotes it).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from abstain.records.runs import RunDir
from abstain.judges import VerdictError, make_judge, parse_verdict
from abstain.judges.abstentionbench import read_grade
from abstain.evaluation.audit import agreement
from abstain.judges.prompts import ABSTENTION, judge_messages
from abstain.llm import ChatClient, ClientConfig, Endpoint
from abstain.outcomes import is_abstention
from abstain.schema import ResponseRow, ScoredRow, dataset_of
from abstain.scoring import score_rows
from _results import report  # bench/_results.py (scripts run from bench/)

LABELS = ("yes", "no")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _strict(text: str | None) -> str | None:
    try:
        return _yes(parse_verdict(text or "", ABSTENTION.allowed) == "Yes")
    except VerdictError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--judge-base-url", required=True)
    parser.add_argument("--judge-model", required=True)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    rows: list[ScoredRow] = []
    for folder in args.runs:
        found = RunDir(folder).read_rows("scored.jsonl", ScoredRow)
        if any(r.judged_by.get("behavior") not in ("abstentionbench", None) for r in found):
            raise SystemExit(f"{folder}: not judged by --judge abstentionbench")
        rows.extend(r for r in found if "behavior" not in r.judge_errors)  # the grader's verdict is the reference
    responses = [ResponseRow.model_validate(r.model_dump(include=set(ResponseRow.model_fields))) for r in rows]
    grader = [_yes(is_abstention(r)) for r in rows]

    client = ChatClient(Endpoint(base_url=args.judge_base_url.rstrip("/"), model=args.judge_model),
                        ClientConfig(concurrency=args.concurrency))
    # abstain's ABSTENTION prompt (the messages detect_abstention sends), read two ways from one round of replies:
    # strictly, with detect_abstention's parse_verdict (exactly Yes or No, else undecided), and as the port reads its
    # grader (the last yes/no word): the prompt apart from the parsing
    replies = client.chat_many([judge_messages(ABSTENTION, 6000, question=r.question, response=r.response)
                                for r in responses])
    strict = [_strict(x.text) if x.ok else None for x in replies]
    graded = [read_grade(x.text or "") if x.ok else None for x in replies]
    lenient = [None if g is None else _yes(g) for g in graded]
    rule = [_yes(is_abstention(r)) for r in score_rows(responses, make_judge("rule"))]

    groups: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        groups[dataset_of(row)].append(i)
    groups = {"all": list(range(len(rows))), **dict(sorted(groups.items()))}
    table = {}
    for name, index in groups.items():
        ref = [grader[i] for i in index]
        entry = {"n": len(index), "grader_abstains": sum(v == "yes" for v in ref) / len(index)}
        for judge, verdicts in (("abstention_prompt", strict), ("abstention_prompt_read_as_the_port", lenient),
                                ("rule", rule)):
            a = agreement("abstained", ref, [verdicts[i] for i in index], LABELS)
            entry[judge] = {"agreement": a.accuracy, "kappa": a.kappa, "undecided": a.undecided,
                            "abstains": sum(verdicts[i] == "yes" for i in index) / len(index)}
        table[name] = entry
    report("judge_agreement", {"judge_model": args.judge_model, "runs": [str(r) for r in args.runs], "by_dataset": table},
           echo=False)

    def fmt(x: float | None) -> str:
        return "—" if x is None else f"{x:.2f}"

    print("| dataset | n | grader abstains | ABSTENTION, strict: readable | agreement | κ | ABSTENTION, read as the "
          "port reads: agreement | κ | abstains | rule: agreement | κ | abstains |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, e in table.items():
        a, b, r = e["abstention_prompt"], e["abstention_prompt_read_as_the_port"], e["rule"]
        readable = 1 - a["undecided"] / e["n"]
        print(f"| {name} | {e['n']} | {fmt(e['grader_abstains'])} | {fmt(readable)} | {fmt(a['agreement'])} | "
              f"{fmt(a['kappa'])} | {fmt(b['agreement'])} | {fmt(b['kappa'])} | {fmt(b['abstains'])} | "
              f"{fmt(r['agreement'])} | {fmt(r['kappa'])} | {fmt(r['abstains'])} |")


if __name__ == "__main__":
    main()
