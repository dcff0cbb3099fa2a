"""The README is the front page: its Python examples run as doctests, and it links every page of docs/.

Every ```python block of README.md is a doctest that starts with ``>>> import abstain`` or
``>>> from abstain``. The first one (scoring and metrics, offline, no model) runs on every test run; the
ones that load the bundled model say so with a ``tmp = tempfile.mkdtemp()`` line (their output folder) and
run as ``slow`` tests, each in a fresh interpreter under a timeout.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from markdown_pages import DOCS, README, ROOT, links

MODEL_MARK = "tmp = tempfile.mkdtemp()"  # an example that loads the bundled model and writes a run folder
MODEL_TIMEOUT_S = 420  # first use dequantizes the bundled GGUF (15-40 s); each example then takes < 1 min
PREFIXES = (">>> import abstain", ">>> from abstain")


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def python_examples() -> list[str]:
    return [b for b in python_blocks() if b.lstrip().startswith(PREFIXES)]


def model_examples() -> list[str]:
    return [b for b in python_examples()[1:] if MODEL_MARK in b]


def run_doctest(text: str, cwd: Path, timeout: int) -> subprocess.CompletedProcess[str]:
    """Run ``text`` as one doctest in a fresh interpreter (offline, quiet, as `make test` runs)."""
    script = textwrap.dedent(f"""
        import doctest, sys
        text = {text!r}
        test = doctest.DocTestParser().get_doctest(text, {{}}, "README", "README.md", 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        sys.exit(1 if runner.failures or not runner.tries else 0)
    """)
    env = dict(os.environ)
    for key, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false"),
                       ("OMP_WAIT_POLICY", "PASSIVE"), ("ABSTAIN_NO_PROGRESS", "1")):
        env.setdefault(key, value)
    return subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_every_python_block_is_a_collected_doctest():
    blocks = python_blocks()
    assert blocks, "README.md has no ```python example"
    for block in blocks:
        assert block.lstrip().startswith(PREFIXES), f"a README python block is not a doctest:\n{block[:300]}"
    examples = python_examples()
    for block in examples[1:]:
        assert MODEL_MARK in block, f"only the first example runs unmarked; mark this one with {MODEL_MARK!r}:\n" \
                                    f"{block[:300]}"


def test_the_readme_example_uses_the_top_level_api_and_runs(tmp_path):
    examples = python_examples()
    assert examples, "README.md has no `>>> import abstain` example"
    assert examples[0].lstrip().startswith(">>> import abstain")
    assert MODEL_MARK not in examples[0], "the first example must run offline, without a model"
    proc = run_doctest(examples[0], tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "abstain.score(" in examples[0] and "abstain.compute_metrics(" in examples[0]


def test_the_readme_shows_evaluation_and_training_from_python():
    text = "\n".join(model_examples())
    assert "abstain.evaluate(" in text and "abstain.EvalConfig(" in text
    assert "from abstain.train import" in text and "train(load_recipe(" in text


def example_id(index: int) -> str:
    block = model_examples()[index]
    return "evaluate" if "abstain.evaluate(" in block else "train" if "train(" in block else str(index)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(model_examples())), ids=example_id)
def test_the_readme_model_examples_run(index, tmp_path, bundled_model_dir):
    example = model_examples()[index]
    proc = run_doctest(example, tmp_path, timeout=MODEL_TIMEOUT_S)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


# ---- the front page and its links ----------------------------------------------------------------


def test_the_front_page_stays_short_and_names_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150, "README.md is the front page: keep it <= 150 lines, move detail to docs/"
    assert "make demo" in text and "make test" in text


# Every relative link and #anchor of README.md and docs/ resolves: tests/test_docs.py.


def linked_pages(page: Path) -> set[Path]:
    """The files ``page``'s relative links point at."""
    return {(page.parent / t.partition("#")[0]).resolve() for _, t in links(page.read_text(encoding="utf-8"))
            if t.partition("#")[0] and not re.match(r"^[a-z]+:", t)}


def test_every_docs_page_is_linked_from_the_readme_or_the_index_and_opens_with_a_summary():
    index = DOCS / "README.md"  # the documentation's index: Getting started, How-to, Reference, Background
    assert index.resolve() in linked_pages(README), "README.md does not link the index, docs/README.md"
    linked = linked_pages(README) | linked_pages(index)
    for page in sorted(DOCS.rglob("*.md")):
        name = page.relative_to(ROOT)
        assert page.resolve() in linked, f"{name} is linked neither from README.md nor from docs/README.md, the index"
        if page.name == "design.md":  # the architecture record keeps its own opening
            continue
        lines = page.read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# ") and not lines[1].strip(), f"{name}: a '# Title' line, then a blank line"
        assert lines[2].strip() and not lines[3].strip(), f"{name}: a one-line summary under the title"
