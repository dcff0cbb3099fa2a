"""A llama.cpp test server that dies is one named failure, not a cascade of ``Connection refused``.

Each case runs an inner pytest session (pytester, in a subprocess) with the project's own server fixture
(``tests/llama_server_plugin.py``) against the real ``llama_cpp.server``: a crash mid-test names the signal and
the log, and the next test gets a fresh server; a server that cannot start is one error and the rest skip;
two crashes in a row stop the restarts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent
CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from llama_server_plugin import llama_server, pytest_runtest_makereport  # noqa: F401
"""
CRASH = """
def test_{name}(llama_server):
    os.kill(llama_server.process.pid, signal.SIGSEGV)  # what a general protection fault in ggml does
    llama_server.process.wait(30)
    llama_server.chat("Hi")  # httpx.ConnectError: the test's own error
"""
USE = """
def test_{name}(llama_server):
    assert llama_server.death() is None
    assert llama_server.chat("Say hi", max_tokens=2)
"""


def _run(pytester: pytest.Pytester, *tests: str, **env: str):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile("import os, signal\n" + "".join(t.format(name=f"t{i}") for i, t in enumerate(tests)))
    for key, value in env.items():
        pytester._monkeypatch.setenv(key, value)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")  # no FAILED summary lines: their width depends on the terminal
    return result, result.stdout.str()


def test_a_crash_is_one_named_failure_and_the_next_test_gets_a_fresh_server(pytester):
    result, out = _run(pytester, CRASH, USE, USE)
    result.assert_outcomes(passed=2, failed=1)
    assert "the llama.cpp test server died during this test" in out
    assert "killed by SIGSEGV (signal 11)" in out and "--- last lines of " in out
    assert "ConnectError" in out  # the test's own error is kept, below the death
    assert out.count("died during this test") == 1


def test_a_server_that_cannot_start_is_one_error_and_the_rest_skip(pytester):
    bad = pytester.path / "not-a-model.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    result, out = _run(pytester, USE, USE, USE, ABSTAIN_TEST_LLAMA_MODEL=str(bad))
    result.assert_outcomes(errors=1, skipped=2)  # the fixture's failure: an error at the first test's setup
    assert "the llama.cpp test server could not start" in out and "died while starting: exit code 1" in out
    assert "Failed to load model from file" in out  # the log's last lines
    assert "no llama.cpp server: it could not start, see the failure of test_a_server_that" in out


def test_two_crashes_in_a_row_stop_the_restarts(pytester):
    result, out = _run(pytester, CRASH, CRASH, USE, USE)
    result.assert_outcomes(failed=2, skipped=2)
    assert out.count("killed by SIGSEGV") == 2
    assert "no llama.cpp server: it died 2 times in a row, the last during test_two_crashes" in out
