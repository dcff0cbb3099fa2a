"""An on-disk cache of chat completions, keyed by (model, prompt, sampling settings).

Re-scoring the same rows with the same judge costs nothing: every successful answer is stored in one
SQLite file (``abstain.paths.cache_dir("llm")/chat.sqlite`` by default). Only successful texts are
stored — errors are never cached. The key is a SHA-256 of the model name, the messages and the
sampling settings; the server URL and the API key are not part of it (the same model served elsewhere
gives the same answers) and are never written.

Example:
    >>> import tempfile, pathlib
    >>> cache = ResponseCache(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
    >>> key = cache_key("m", [{"role": "user", "content": "hi"}], {"temperature": 0.0})
    >>> cache.get(key) is None
    True
    >>> cache.put(key, "m", "hello"); cache.get(key)
    'hello'
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["ResponseCache", "cache_key"]


def cache_key(model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, object]) -> str:
    """A stable hex digest of what determines an answer (never the URL or the key)."""
    blob = json.dumps(
        {"model": model, "messages": [dict(m) for m in messages], "params": dict(params)},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """A thread-safe SQLite key -> text store; several processes may share the file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS chat (key TEXT PRIMARY KEY, model TEXT, text TEXT, created REAL)"
            )

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT text FROM chat WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def put(self, key: str, model: str, text: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO chat (key, model, text, created) VALUES (?, ?, ?, ?)",
                (key, model, text, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM chat").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
