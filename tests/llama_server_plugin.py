"""The pytest side of the llama.cpp test server: one server per session, checked around every test that uses it.

- Before a test: a server that died (or was never started) is started afresh; one that cannot start fails that
  test with why (its exit code or signal and its log's last lines), and every later test that needs it skips,
  pointing at that failure.
- After a failed test: when the server died during it, the failure says so first (exit code or signal, log
  tail), above the test's own error (usually a ``ConnectError``), so a crash reads as a crash.
- Two deaths in a row (a build that dies on every request) also stop the restarts: one or two failures, never a
  cascade of thirteen ``Connection refused``.

``tests/conftest.py`` imports ``llama_server`` and ``pytest_runtest_makereport`` from here;
``tests/test_llama_server_fixture.py`` runs them in an inner pytest session against a real server.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from llama_server import LlamaServer, server_available

__all__ = ["SERVER_KEEPER", "ServerKeeper", "llama_server", "pytest_runtest_makereport"]


@dataclass
class ServerKeeper:
    """Owns the session's server: starts it on demand, notices deaths, and gives up after ``max_deaths`` in a row."""

    max_deaths: int = 2
    server: LlamaServer | None = None
    deaths_in_a_row: int = 0
    broken: str | None = None  # why no test gets a server any more (names the test that failed)
    deaths: list[str] = field(default_factory=list)
    cleanup_added: bool = False

    def acquire(self, nodeid: str) -> LlamaServer:
        """A live server for ``nodeid``: skips once the keeper gave up, fails the test when no server starts."""
        if self.broken:
            pytest.skip(f"no llama.cpp server: {self.broken}")
        if self.server is not None and self.server.death() is None:
            return self.server
        try:
            if self.server is None:
                reason = server_available()
                if reason:  # `make test` installs it: a missing server is a broken setup, not a skip
                    raise RuntimeError(reason)
                self.server = LlamaServer.start()
            else:
                self.server.restart()
        except RuntimeError as exc:
            self.broken = f"it could not start, see the failure of {nodeid}"
            pytest.fail(f"the llama.cpp test server could not start:\n{exc}", pytrace=False)
        return self.server

    def died_during(self, nodeid: str) -> str | None:
        """After ``nodeid`` ran: None when the server still runs, else its death (recorded once)."""
        death = self.server.death() if self.server is not None else None
        if death is None:
            self.deaths_in_a_row = 0
            return None
        if len(self.deaths) == 0 or not self.deaths[-1].startswith(nodeid + ": "):
            self.deaths.append(f"{nodeid}: {death}")
            self.deaths_in_a_row += 1
            if self.deaths_in_a_row >= self.max_deaths:
                self.broken = f"it died {self.deaths_in_a_row} times in a row, the last during {nodeid}"
        return death

    def close(self) -> None:
        if self.server is not None:
            self.server.__exit__()


SERVER_KEEPER = ServerKeeper()


@pytest.fixture
def llama_server(request):
    """A running ``python -m llama_cpp.server`` (bundled SmolLM2) on 127.0.0.1, shared by the session."""
    if not SERVER_KEEPER.cleanup_added:
        request.session.config.add_cleanup(SERVER_KEEPER.close)
        SERVER_KEEPER.cleanup_added = True
    server = SERVER_KEEPER.acquire(request.node.nodeid)
    yield server
    SERVER_KEEPER.died_during(request.node.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that failed while the server died reports the death first, then its own error."""
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or not report.failed or "llama_server" not in getattr(item, "fixturenames", ()):
        return
    death = SERVER_KEEPER.died_during(item.nodeid)
    if death is not None:
        report.longrepr = f"the llama.cpp test server died during this test: {death}\n\n--- the test's own error ---\n{report.longreprtext}"
