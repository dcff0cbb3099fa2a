"""The README's Python example runs, as a doctest, in a fresh interpreter (the first thing a user tries)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_examples() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [b for b in blocks if b.lstrip().startswith(">>> import abstain")]


def test_the_readme_example_uses_the_top_level_api_and_runs(tmp_path):
    examples = python_examples()
    assert examples, "README.md has no `>>> import abstain` example"
    script = textwrap.dedent(f"""
        import doctest, sys
        text = {examples[0]!r}
        test = doctest.DocTestParser().get_doctest(text, {{}}, "README", "README.md", 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        sys.exit(1 if runner.failures or not runner.tries else 0)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "abstain.score(" in examples[0] and "abstain.compute_metrics(" in examples[0]
