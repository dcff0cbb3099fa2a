"""Docs that cannot rot: what README.md and docs/ say is checked against the code on every test run.

* Every ``abstain …`` command they show — in fenced shell blocks and in inline code spans — names commands and
  options the CLI has (parsed against the click command the typer app builds, once: no model, no process per
  command). docs/experiments/ is left out: those pages record past runs as they were typed.
* Every relative link and ``#anchor`` resolves to a file the repository keeps and a heading it has.
* Each generated reference page (docs/reference/) is what its generator prints now.
"""

from __future__ import annotations

import doctest
import math
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from markdown_pages import (
    DOCS,
    EXPERIMENTS,
    ROOT,
    broken_links,
    code_spans,
    fenced_blocks,
    markdown_files,
    prose,
    rel,
    repository_paths,
)

from abstain.cli.reference_docs import PAGES, REGENERATE, page
from abstain.cli.reference_docs.cli import context, is_group, root_command

SHELL = {"bash", "sh", "shell", "console", "zsh", "shell-session"}
_SEPARATORS = {"|", "||", "&&", ";", "&"}
_REDIRECT = re.compile(r"^\d?(>>?|>&\d?)$|^<$|^&>$")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIXES = {"time", "nohup", "env", "exec"}  # words that run the command after them
_NUMBER = re.compile(r"^-\d")


# ---- finding the commands -----------------------------------------------------------------------


def command_pages() -> list[Path]:
    """The pages whose commands are checked: README.md and docs/, except the experiment records."""
    return [p for p in markdown_files() if not p.is_relative_to(EXPERIMENTS)]


def _logical_lines(lines: list[str], first: int) -> list[tuple[int, str]]:
    """Shell lines with their ``\\`` continuations joined, each numbered by its first line; a ``$ `` prompt dropped."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for offset, line in enumerate(lines):
        number = first + offset
        if pending is None:
            line = re.sub(r"^\s*\$ ", "", line)
            pending = (number, "")
        body = line.rstrip()
        if body.endswith("\\") and not body.endswith("\\\\"):
            pending = (pending[0], pending[1] + body[:-1] + " ")
            continue
        out.append((pending[0], pending[1] + body))
        pending = None
    if pending is not None:
        out.append(pending)
    return out


def commands_in(text: str) -> list[tuple[int, str]]:
    """``(line number, shell line)`` of every line of a fenced shell block, and every inline code span that runs
    ``abstain`` (``abstain …``, ``VAR=x abstain …``, ``python -m abstain …``)."""
    found = []
    for block in fenced_blocks(text):
        if block.lang in SHELL:
            found += _logical_lines(block.lines, block.line)
    for number, line in prose(text):
        for span in code_spans(line):
            span = span.replace("\\|", "|")  # a pipe inside a table cell's code span
            if re.match(r"^([A-Za-z_]\w*=\S*\s+)*abstain(\s|$)", span) or re.search(r"\s-m abstain(\s|$)", span):
                found.append((number, span))
    return sorted(found, key=lambda f: f[0])


def invocations(line: str) -> list[list[str]]:
    """The argument lists of each ``abstain`` a shell line runs: after ``abstain`` itself (env assignments, ``time``
    … before it allowed), after ``-m abstain`` (``python``, ``torchrun``, ``accelerate launch``) and inside
    ``$(abstain …)``. Pipes, ``&&``, ``;`` and redirections separate; comments end the line.

    Raises ValueError on a line a shell could not split (an unclosed quote).
    """
    found = [args for inner in re.findall(r"\$\((abstain\b[^()]*)\)", line) for args in invocations(inner)]
    words: list[str] = []
    for word in shlex.split(line, comments=True):
        if word.endswith(";") and len(word) > 1:
            words += [word[:-1], ";"]
        else:
            words.append(word)
    segment: list[str] = []
    for word in [*words, ";"]:
        if word not in _SEPARATORS:
            segment.append(word)
            continue
        args = _abstain_args(segment)
        if args is not None:
            found.append(args)
        segment = []
    return found


def _abstain_args(segment: list[str]) -> list[str] | None:
    kept, skip = [], False
    for word in segment:
        if skip:
            skip = False
        elif _REDIRECT.match(word):
            skip = True  # the file it redirects to
        elif not re.match(r"^\d?>", word):
            kept.append(word)
    while kept and (_ENV.match(kept[0]) or kept[0] in _PREFIXES):
        kept.pop(0)
    if kept and kept[0] == "abstain":
        return kept[1:]
    for i in range(len(kept) - 1):
        if kept[i] == "-m" and kept[i + 1] == "abstain":
            return kept[i + 2:]
    return None


# ---- checking them against the CLI --------------------------------------------------------------


@cache
def cli() -> Any:
    """The ``abstain`` click command, built once."""
    return root_command()


def _placeholder(word: str) -> bool:
    """``…``, ``...``, ``<dir>``, ``DIR``: a stand-in the reader replaces, not a value to check."""
    return "…" in word or word == "..." or bool(re.fullmatch(r"<[^<>]*>|[A-Z][A-Z0-9_]*(\.\.\.)?", word))


def _without_brackets(args: list[str]) -> list[str]:
    """A usage line's optional parts: ``[--judge rule|llm]`` kept as ``--judge rule|llm``; a bracketed note that
    holds no option (``[judge flags: docs/judges.md]``) dropped."""
    out, depth, note = [], 0, False
    for word in args:
        opens = word.startswith("[") and depth == 0
        if opens:
            depth, note = 1, not word.startswith("[-")
            word = word[1:]
        closes = depth and word.endswith("]") and word.count("[") < word.count("]")
        if closes:
            word = word[:-1]
        if not note and word:
            out.append(word)
        if closes:
            depth, note = 0, False
    return out


def problems(args: list[str], command: Any = None, path: str = "abstain") -> list[str]:
    """What in ``abstain ARGS`` the CLI does not have: an unknown command, an option the command lacks, more
    positional arguments than it takes. ``a|b`` where a command goes checks both; values are not checked (only
    that an option which takes one gets one)."""
    command = command if command is not None else cli()
    args = _without_brackets(args) if path == "abstain" else args
    ctx = context(command, path)
    params = command.get_params(ctx)
    options = {name: p for p in params if p.param_type_name == "option" for name in [*p.opts, *p.secondary_opts]}
    arguments = [p for p in params if p.param_type_name != "option"]
    room = math.inf if any(p.nargs == -1 for p in arguments) else sum(p.nargs for p in arguments)
    found: list[str] = []
    given = 0
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":  # the rest goes through (abstain serve … -- --enforce-eager)
            break
        if word.startswith("-") and len(word) > 1 and not _NUMBER.match(word):
            name, eq, _ = word.partition("=")
            option = options.get(name)
            if option is None:
                found.append(f"`{path}` has no option {name}")
                if not eq and i < len(args) and not args[i].startswith("-"):
                    i += 1  # most likely its value: one mistake, one problem
            elif not (option.is_flag or option.count) and not eq:
                i += max(option.nargs, 1)  # its value
            continue
        if is_group(command):
            if _placeholder(word):
                return found
            for name in word.split("|"):
                sub = command.get_command(ctx, name)
                if sub is None:
                    known = ", ".join(command.list_commands(ctx))
                    found.append(f"`{path}` has no command {name!r} (it has: {known})")
                else:
                    found += problems(args[i:], sub, f"{path} {name}")
            return found
        if word in ("…", "..."):
            continue
        given += 1
        if given > room:
            found.append(f"`{path}` takes {'no' if not room else room} positional argument(s); got {word!r}")
    return found


def command_problems(text: str) -> list[str]:
    """``line: `command`: problem`` for each command of a page the CLI does not have (or a shell cannot split)."""
    out = []
    for number, line in commands_in(text):
        try:
            found = [p for args in invocations(line) for p in problems(args)]
        except ValueError as exc:
            found = [f"a shell cannot split it ({exc})"]
        out += [f"{number}: `{' '.join(line.split())}`: {p}" for p in found]
    return out


def test_the_command_check_tells_good_commands_from_bad_ones():
    text = "\n".join([
        "Run `abstain eval --model bundled --suite quick --out <dir>` or `abstain train sft|grpo --recipe X`;",
        "`abstain evaluate --model bundled`, `abstain train grpo --kind dpo` and `abstain report a b` are wrong.",
        "",
        "```bash",
        "WANDB_MODE=offline abstain train grpo --recipe tiny-grpo \\",
        "    --set steps=3 --no-such-flag   # a comment --nor-this",
        "torchrun --nproc_per_node 2 -m abstain train sft --recipe r.yaml --bogus 1 | tee log && abstain suites -x",
        'lm_eval --include_path "$(abstain lm-eval-path --wrong)" --tasks abstain',
        "abstain serve --model bundled -- --enforce-eager",
        "abstain score   --input r.jsonl --output s.jsonl [--judge rule|llm] [judge flags: docs/judges.md] [--nope]",
        "abstain metrics -i scored.jsonl --json out.json > metrics.log 2>&1",
        "```",
        "`abstain train dpo|ppo`; `python -m abstain cues --suite heldout --resamples=10`;",
        "`abstain compare A B … -o C`",
    ])
    assert command_problems(text) == [
        "2: `abstain evaluate --model bundled`: `abstain` has no command 'evaluate' (it has: "
        + ", ".join(cli().list_commands(context(cli()))) + ")",
        "2: `abstain train grpo --kind dpo`: `abstain train grpo` has no option --kind",
        "2: `abstain report a b`: `abstain report` takes 1 positional argument(s); got 'b'",
        "5: `WANDB_MODE=offline abstain train grpo --recipe tiny-grpo --set steps=3 --no-such-flag # a comment "
        "--nor-this`: `abstain train grpo` has no option --no-such-flag",
        "7: `torchrun --nproc_per_node 2 -m abstain train sft --recipe r.yaml --bogus 1 | tee log && abstain suites "
        "-x`: `abstain train sft` has no option --bogus",
        "7: `torchrun --nproc_per_node 2 -m abstain train sft --recipe r.yaml --bogus 1 | tee log && abstain suites "
        "-x`: `abstain suites` has no option -x",
        '8: `lm_eval --include_path "$(abstain lm-eval-path --wrong)" --tasks abstain`: `abstain lm-eval-path` has '
        "no option --wrong",
        "10: `abstain score --input r.jsonl --output s.jsonl [--judge rule|llm] [judge flags: docs/judges.md] "
        "[--nope]`: `abstain score` has no option --nope",
        "13: `abstain train dpo|ppo`: `abstain train` has no command 'ppo' (it has: grpo, sft, dpo, pipeline, "
        "recipes)",
    ]


def test_the_manual_shows_commands_to_check():
    counted = {rel(p): len(commands_in(p.read_text(encoding="utf-8"))) for p in command_pages()}
    assert sum(counted.values()) >= 50, counted  # the finder finds them (a broken one would pass every page)


@pytest.mark.parametrize("path", command_pages(), ids=rel)
def test_every_abstain_command_in_the_docs_exists_with_its_options(path):
    found = command_problems(path.read_text(encoding="utf-8"))
    assert not found, f"{rel(path)}: commands the CLI does not have:\n" + "\n".join(
        f"{rel(path)}:{p}" for p in found)


# ---- links ---------------------------------------------------------------------------------------


def test_the_markdown_readers_examples_hold():
    import markdown_pages

    result = doctest.testmod(markdown_pages)
    assert result.attempted and not result.failed


def test_the_link_check_follows_githubs_rules():
    text = "\n".join([
        "# Title", "## Second `code` part", "## Second `code` part", '<a id="custom"></a>',
        "[ok](#title) [ok](#second-code-part-1) [ok](#custom) [ok](../README.md) [ok](https://example.org/x)",
        "[bad](#second-code-part-2) [bad](missing.md) [bad](../../outside.md) [bad](../README.md#no-such-heading)",
        "`[not a link](nowhere.md)` [ok](reference/cli.md#abstain-train-grpo) [bad](../.git)",
    ])
    assert broken_links(DOCS / "example.md", text) == [
        (6, "#second-code-part-2: no heading #second-code-part-2 on this page"), (6, "missing.md: no such file"),
        (6, "../../outside.md: outside the repository"),
        (6, "../README.md#no-such-heading: no heading #no-such-heading in README.md"),
    ] + ([(7, "../.git: .git is not in the repository (git does not keep it)")] if repository_paths() else [])


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_relative_links_point_at_files_and_headings_that_exist(path):
    broken = broken_links(path, path.read_text(encoding="utf-8"))
    assert not broken, "broken links:\n" + "\n".join(f"{rel(path)}:{number}: {problem}" for number, problem in broken)


# ---- the generated reference pages ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_generated_reference_page_is_what_its_generator_prints(name):
    committed = DOCS / "reference" / name
    assert committed.exists(), f"docs/reference/{name} is missing: {REGENERATE}"
    assert committed.read_text(encoding="utf-8") == page(name), f"docs/reference/{name} is stale: {REGENERATE}"


def test_the_generators_load_neither_torch_nor_trl():
    script = ("import sys; from abstain.cli.reference_docs import PAGES, page; [page(n) for n in PAGES]; "
              "print(sorted(m for m in ('torch', 'trl', 'transformers', 'vllm') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]", f"generating docs/reference/ imported {proc.stdout.strip()}"
