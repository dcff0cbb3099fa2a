"""The manual's Markdown read as GitHub renders it, for the tests that keep it true (test_docs.py, test_readme.py):
its pages, fenced blocks, prose lines, code spans, links and heading anchors, each with its line number.

Example:
    >>> text = "# A `b` title\\n\\nSee [it](other.md#x).\\n\\n```bash\\nabstain eval  # [not](a-link.md)\\n```\\n"
    >>> anchors(text), links(text)
    ({'a-b-title'}, [(3, 'other.md#x')])
    >>> [(b.lang, b.line, b.lines) for b in fenced_blocks(text)]
    [('bash', 6, ['abstain eval  # [not](a-link.md)'])]
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: the records of past experiments: their commands are history, not instructions (their links are still checked)
EXPERIMENTS = DOCS / "experiments"

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
#: a line that an underline below does not make a heading: a list item, an ATX heading, a table row
_NOT_SETEXT = re.compile(r"^\s*([-*+]|\d+\.)\s|^\s*#|.*\|")


def markdown_files() -> list[Path]:
    """README.md and every page under docs/."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


@dataclass(frozen=True)
class Block:
    """A fenced code block: its info string's language, the line number of its first content line, its lines."""

    lang: str
    line: int
    lines: list[str]


def _scan(text: str) -> tuple[list[Block], list[tuple[int, str]]]:
    blocks: list[Block] = []
    prose: list[tuple[int, str]] = []
    fence: tuple[str, str, int, list[str]] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = (match.group(1), match.group(2).lower(), number + 1, [])
            else:
                prose.append((number, line))
        elif match and match.group(1)[0] == fence[0][0] and len(match.group(1)) >= len(fence[0]) \
                and not line.strip().strip(fence[0][0]):
            blocks.append(Block(fence[1], fence[2], fence[3]))
            fence = None
        else:
            fence[3].append(line)
    return blocks, prose


def fenced_blocks(text: str) -> list[Block]:
    return _scan(text)[0]


def prose(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of each line outside fenced code blocks."""
    return _scan(text)[1]


def code_spans(line: str) -> list[str]:
    """The inline code spans of one line, their content stripped."""
    return [m.group(2).strip() for m in _SPAN.finditer(line)]


def without_code(line: str) -> str:
    return _SPAN.sub("", line)


def links(text: str) -> list[tuple[int, str]]:
    """``(line number, target)`` of every link and image outside code: inline ``[text](target "title")``,
    reference definitions ``[label]: target`` and HTML ``href`` / ``src``."""
    found = []
    for number, line in prose(text):
        line = without_code(line)
        targets = re.findall(r"\]\(\s*<?([^)\s>]+)>?", line)
        targets += re.findall(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", line)
        targets += re.findall(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']""", line)
        found += [(number, t) for t in targets]
    return found


def _heading_text(raw: str) -> str:
    """A heading's text as GitHub renders it: images and links become their text, HTML tags go, emphasis
    underscores go (inside code spans they stay)."""
    raw = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    raw = re.sub(r"<[^>]+>", "", raw)
    parts = re.split(r"(`+[^`]*`+)", raw)
    return "".join(p if p.startswith("`") else re.sub(r"(?<!\w)_+|_+(?!\w)", "", p) for p in parts)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading (github-slugger): lowercase, every character but letters, digits, ``-``, ``_``
    and space dropped, each space a ``-``.

    >>> slug("The llama.cpp server"), slug("`abstain eval --suite`: what's new?"), slug("A  B")
    ('the-llamacpp-server', 'abstain-eval---suite-whats-new', 'a--b')
    """
    return re.sub(r"[^\w\- ]", "", _heading_text(heading).strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a page has: its headings' slugs (``-1``, ``-2`` … for repeats, as GitHub numbers them) and the
    ``id`` / ``name`` of its HTML elements."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    lines = prose(text)
    previous = ""
    for number, line in lines:
        heading = None
        match = re.match(r"^ {0,3}#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*$", line)
        if match:
            heading = match.group(1) or ""
        elif re.match(r"^ {0,3}(=+|-+)\s*$", line) and previous.strip() and not _NOT_SETEXT.match(previous):
            heading = previous.strip()  # a setext heading: the line above, underlined
        if heading is not None:
            base = slug(heading)
            count = seen.get(base, 0)
            seen[base] = count + 1
            out.add(base if count == 0 else f"{base}-{count}")
        out.update(re.findall(r"""<[a-zA-Z][^>]*\s(?:id|name)\s*=\s*["']([^"']+)["']""", line))
        previous = line
    return out


@cache
def repository_paths() -> frozenset[Path] | None:
    """The files git would put in a commit (tracked, or new and not ignored) and their folders; None outside a git
    checkout (one ``git ls-files`` for the whole session)."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                                capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    files = [ROOT / name for name in listed.split("\0") if name]
    return frozenset([*files, *(folder for f in files for folder in f.parents if folder.is_relative_to(ROOT))])


@cache
def _anchors_of(path: Path) -> set[str]:
    return anchors(path.read_text(encoding="utf-8"))


def broken_link(page: Path, target: str) -> str | None:
    """What is wrong with a link of ``page`` (a file of the repository), or None: a relative target must name a
    file or folder of the repository — one git keeps, not an ignored one (``runs/…``) — and its ``#anchor`` a
    heading of that page. Links with a scheme (``https:``, ``mailto:``) are not followed."""
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//", target):
        return None
    file, _, anchor = target.partition("#")
    file, anchor = unquote(file), unquote(anchor)
    if file.startswith("/"):  # GitHub resolves it from the repository root
        dest = ROOT / file.lstrip("/")
    else:
        dest = page.parent / file if file else page
    dest = Path(*_normal(dest.parts))
    if not dest.is_relative_to(ROOT):
        return f"{target}: outside the repository"
    if not dest.exists():
        return f"{target}: no such file"
    kept = repository_paths()
    if kept is not None and dest not in kept:
        return f"{target}: {rel(dest)} is not in the repository (git does not keep it)"
    if anchor and dest.is_file() and dest.suffix == ".md" and anchor not in _anchors_of(dest):
        return f"{target}: no heading #{anchor} in {rel(dest)}"
    return None


def broken_links(page: Path, text: str) -> list[tuple[int, str]]:
    """``(line number, what is wrong)`` for each broken link of ``text``, the page at ``page`` (which need not be on
    disk: its own ``#anchors`` are read from ``text``)."""
    own = anchors(text)
    found = []
    for number, target in links(text):
        if target.startswith("#"):
            anchor = unquote(target[1:])
            problem = None if anchor in own else f"{target}: no heading #{anchor} on this page"
        else:
            problem = broken_link(page, target)
        if problem:
            found.append((number, problem))
    return found


def _normal(parts: tuple[str, ...]) -> list[str]:
    """A path's parts with ``.`` and ``..`` resolved lexically (symlinks are not followed: GitHub does not)."""
    out: list[str] = []
    for part in parts:
        if part == "..":
            if len(out) > 1:
                out.pop()
        elif part != ".":
            out.append(part)
    return out
