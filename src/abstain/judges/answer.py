"""Rule-based answer correctness: normalized exact match, a numeric fast path, then Math-Verify.

A prediction is correct when it matches ANY reference answer. For each reference:

* a **plain-number reference** (``$1,200``, ``18.0``, ``3/4``, ``\\frac{3}{4}``, ``50\\%``, ``12 apples``) is compared
  numerically with the answer the prediction *states* (:func:`abstain.judges.stated.stated_answer`: the "answer
  is …", else the right-hand side of the last equation, else the last number) and with nothing else in the text;
  an unevaluated expression of numbers (``93+59``, ``2^{10}``) states no answer and never matches;
* any other reference: SQuAD-style normalized exact match (lowercase, no punctuation/articles/extra spaces), then,
  when the reference looks mathematical (MATH-style ``\\frac``, intervals, expressions with variables),
  Math-Verify ``verify(parse(gold), parse(pred))``.

``AnswerConfig(match="math_verify")`` is the rule before the stated answer, kept for Abstain-R1's released reward:
every reference is tried by exact match, the numeric comparison of a wholly numeric prediction, then Math-Verify
over the whole text, which evaluates any expression it finds there (an echo of the question's ``93+59`` "equals"
152).

Math-Verify enforces its timeouts with ``SIGALRM``, which only works on the main thread: called from
a worker thread it raises and ``verify`` silently returns False. :func:`math_equal` therefore runs
inline on the main thread and, from any other thread, in worker subprocesses (each runs Math-Verify on its
own main thread, so the timeout holds). A worker that overruns a hard deadline is killed and replaced. Either way a pathological input such as ``9^{9^{9^{9}}}`` returns within the timeout.

**Errors stay errors.** A Math-Verify timeout, an exception inside it, or a worker that dies or misses
its deadline raises :class:`MathVerifyError` — never "not equal" — and nothing about that call is
cached; the judges turn it into a judge error of the ``correct`` field.

Example:
    >>> check_answer("18.0", ["18"])
    True
    >>> check_answer("\\\\frac{1}{2}", ["0.5"])
    True
    >>> check_answer("the Beatles", ["Beatles"])
    True
    >>> check_answer("17", ["18"])
    False
    >>> check_answer("93+59", ["152"]), check_answer("93+59", ["152"], AnswerConfig(match="math_verify"))
    (False, True)
"""

from __future__ import annotations

import atexit
import functools
import json
import re
import select
import signal
import string
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Literal

from abstain.judges.stated import stated_answer

__all__ = [
    "ANSWER_MATCHES",
    "AnswerConfig",
    "MathVerifyError",
    "check_answer",
    "exact_match",
    "math_equal",
    "normalize_text",
    "numeric_value",
    "stated_number",
]


class MathVerifyError(RuntimeError):
    """Math-Verify could not decide: it timed out, raised, or its worker died. Not a verdict."""


AnswerMatch = Literal["stated", "math_verify"]
#: the answer rules: the stated answer (default), or Math-Verify over the whole text (Abstain-R1's reward)
ANSWER_MATCHES: tuple[str, ...] = ("stated", "math_verify")


@dataclass(frozen=True)
class AnswerConfig:
    """How answers are compared.

    Attributes:
        timeout_s: Math-Verify's per-call timeout (parse and verify each), in seconds.
        rel_tol: relative tolerance of the numeric fast path.
        use_math_verify: turn off to rely on exact match and the numeric path only.
        match: ``stated`` (the default: a plain-number reference is compared with the stated answer only) or
            ``math_verify`` (Math-Verify over the whole text for every reference, echoes credited: Abstain-R1's
            released reward).
    """

    timeout_s: int = 5
    rel_tol: float = 1e-6
    use_math_verify: bool = True
    match: AnswerMatch = "stated"

    def __post_init__(self) -> None:
        if self.match not in ANSWER_MATCHES:
            raise ValueError(f"answer match must be one of {', '.join(ANSWER_MATCHES)} - not {self.match!r}")


DEFAULT = AnswerConfig()

# --- exact match -------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "\u2018\u2019\u201c\u201d")


def normalize_text(text: str) -> str:
    """SQuAD normalization: lowercase, strip punctuation, articles and extra whitespace.

    Example:
        >>> normalize_text("The  Beatles!")
        'beatles'
    """
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(pred: str, gold: str) -> bool:
    """Normalized exact match; empty normalizations never match."""
    p = normalize_text(pred)
    return bool(p) and p == normalize_text(gold)


# --- numeric fast path ---------------------------------------------------------------------------

_TEXT_WRAP = re.compile(r"\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}")
_UNIT_WORDS = re.compile(r"[a-zA-Z][a-zA-Z .]*$")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_FRAC = re.compile(r"^(-?)\\[dt]?frac\{(-?\d+)\}\{(-?\d+)\}$")
_SLASH = re.compile(r"^(-?\d+)\s*/\s*(\d+)$")


@functools.lru_cache(maxsize=65536)
def numeric_value(text: str) -> float | None:
    """The number a short answer denotes, or None when it is not a plain number.

    Currency signs, thousands separators, percent signs, ``\\text{}`` wrappers and trailing unit
    words are ignored; simple fractions are evaluated.

    Example:
        >>> numeric_value("\\\\$1,234.50")
        1234.5
        >>> numeric_value("\\\\frac{3}{4}")
        0.75
        >>> numeric_value("12 apples")
        12.0
        >>> numeric_value("x + 1") is None
        True
    """
    s = _TEXT_WRAP.sub(r"\1", text).strip()
    if len(s) > 40:
        return None
    s = s.replace("\\$", "").replace("$", "").replace("\\%", "").replace("%", "").replace("\\!", "")
    s = s.replace("{,}", "").replace("\\,", "").replace("^\\circ", "").replace("^{\\circ}", "")
    s = s.strip().rstrip(".").strip()
    if re.fullmatch(r"[-+]?\d{1,3}(,\d{3})+(\.\d+)?", s):
        s = s.replace(",", "")
    m = _FRAC.match(s) or _SLASH.match(s)
    if m:
        groups = m.groups()
        sign = -1.0 if groups[0] == "-" and len(groups) == 3 else 1.0
        num, den = (groups[1], groups[2]) if len(groups) == 3 else groups
        return None if float(den) == 0 else sign * float(num) / float(den)
    m = _NUMBER.match(s)
    if not m:
        return None
    rest = s[m.end() :].strip()
    if rest and not _UNIT_WORDS.fullmatch(rest):
        return None
    try:
        return float(m.group(0))
    except ValueError:  # pragma: no cover - regex guarantees a float
        return None


def _numbers_equal(a: float, b: float, rel_tol: float) -> bool:
    return abs(a - b) <= rel_tol * max(1.0, abs(a), abs(b))


# --- Math-Verify, safe from any thread -----------------------------------------------------------

_MATHY = re.compile(r"[\d\\^_{}=+*/<>]")


def _wrap(expr: str) -> str:
    return expr if ("$" in expr or "\\boxed" in expr) else f"\\boxed{{{expr}}}"


@functools.lru_cache(maxsize=16384)
def _mv_parse(text: str, timeout: int):  # type: ignore[no-untyped-def]
    from math_verify import parse

    return parse(_wrap(text), parsing_timeout=timeout, raise_on_error=True)


def _math_equal_inline(gold: str, pred: str, timeout: int) -> bool:
    """Math-Verify on this thread (the main thread: its SIGALRM timeouts need it); errors raise."""
    from math_verify import verify
    from math_verify.errors import TimeoutException  # a BaseException, not an Exception

    try:
        g = _mv_parse(gold, timeout)
        p = _mv_parse(pred, timeout)
        if not g or not p:
            return False
        return bool(verify(g, p, timeout_seconds=timeout, raise_on_error=True))
    except (Exception, TimeoutException) as exc:  # noqa: BLE001 - a timeout or anything sympy raises: no verdict
        raise MathVerifyError(f"{type(exc).__name__}: {str(exc)[:200]}") from exc


def _exit_words(proc: subprocess.Popen[str]) -> str:
    """How a worker whose stdout closed ended: ``'killed by SIGKILL'``, ``'exit code 1'`` (it is reaped here)."""
    try:
        code = proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        return "its output closed, the process still runs"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class _WorkerPool:
    """Math-Verify worker subprocesses for calls made off the main thread.

    Each worker is ``python -m abstain.judges._mathverify_worker``: it reads one JSON request per line
    and answers ``1``, ``0`` or ``E <why>``, on its own main thread (so SIGALRM timeouts hold). Plain subprocesses
    rather than multiprocessing: nothing re-imports the caller's ``__main__`` and nothing is forked
    from a threaded process. A worker that misses the hard deadline is killed; the next call starts
    a fresh one. An idle worker is pinged before it is reused, so one that died while idle is replaced
    rather than failing the next request; a worker that dies *on* a request is that request's judge error.
    """

    def __init__(self, size: int = 2) -> None:
        self._slots = threading.Semaphore(size)
        self._idle: list[subprocess.Popen[str]] = []
        self._lock = threading.Lock()
        atexit.register(self.close)

    def _start(self) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "abstain.judges._mathverify_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    @staticmethod
    def _alive(proc: subprocess.Popen[str]) -> bool:
        """An idle worker answers a ping (one killed while idle may not have exited yet: ``poll()`` misses it)."""
        try:
            return proc.poll() is None and _WorkerPool._send(proc, {"ping": 1}, 5.0) == "P"
        except MathVerifyError:
            return False

    @staticmethod
    def _ask(proc: subprocess.Popen[str], gold: str, pred: str, timeout: int, deadline: float) -> str:
        """The worker's answer line, or raise :class:`MathVerifyError` (the worker is then unusable)."""
        return _WorkerPool._send(proc, {"gold": gold, "pred": pred, "timeout": timeout}, deadline)

    @staticmethod
    def _send(proc: subprocess.Popen[str], request: dict[str, object], deadline: float) -> str:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise MathVerifyError(f"worker died before the request was sent ({exc})") from None
        ready, _, _ = select.select([proc.stdout], [], [], deadline)
        if not ready:
            raise MathVerifyError(f"worker missed its {deadline:g} s deadline and was killed")
        line = proc.stdout.readline().strip()
        if not line:
            raise MathVerifyError(f"worker died ({_exit_words(proc)})")
        return line

    def run(self, gold: str, pred: str, timeout: int) -> bool:
        with self._slots:
            with self._lock:
                # reap idle workers that were killed (poll() collects the exit): no zombie outlives a call
                self._idle = [p for p in self._idle if p.poll() is None]
                proc = self._idle.pop() if self._idle else None
            fresh = proc is None or not self._alive(proc)
            if fresh:
                if proc is not None:
                    proc.kill()
                    proc.wait()
                proc = self._start()
            assert proc is not None
            # parse(gold) + parse(pred) + verify may each use the full timeout; a cold start imports sympy.
            try:
                line = self._ask(proc, gold, pred, timeout, 3 * timeout + (20 if fresh else 5))
            except MathVerifyError:
                proc.kill()
                proc.wait()
                raise
            with self._lock:
                self._idle.append(proc)
        if line in ("0", "1"):
            return line == "1"
        raise MathVerifyError(line[2:] if line.startswith("E ") else f"unreadable worker answer {line[:80]!r}")

    def close(self) -> None:
        with self._lock:
            procs, self._idle = self._idle, []
        for proc in procs:
            proc.kill()
            proc.wait()


_POOL = _WorkerPool()


@functools.lru_cache(maxsize=65536)
def math_equal(gold: str, pred: str, timeout: int = DEFAULT.timeout_s) -> bool:
    """Math-Verify equivalence (gold first), correct from any thread, bounded by ``timeout``.

    Raises :class:`MathVerifyError` when Math-Verify cannot decide (timeout, exception, dead worker);
    only verdicts are cached.

    Example:
        >>> math_equal("\\\\frac{\\\\pi}{2}", "\\\\pi/2")
        True
    """
    if threading.current_thread() is threading.main_thread():
        return _math_equal_inline(gold, pred, timeout)
    return _POOL.run(gold, pred, timeout)


def stated_number(pred: str) -> float | None:
    """The number ``pred`` states as its answer, or None (no number, or an unevaluated expression of numbers).

    Example:
        >>> stated_number("4 + 5 = 9 apples"), stated_number("Tom has 4 + 5 apples"), stated_number("\\\\$1,200")
        (9.0, None, 1200.0)
    """
    whole = numeric_value(pred)
    if whole is not None:
        return whole
    stated = stated_answer(pred)
    return numeric_value(stated.text) if stated.kind == "number" and stated.text else None


def check_answer(pred: str, golds: list[str], config: AnswerConfig = DEFAULT) -> bool:
    """Whether ``pred`` matches any reference in ``golds`` (see the module docstring).

    Raises :class:`MathVerifyError` when no reference matched and Math-Verify failed on one of them.
    """
    pred = pred.strip()
    if not pred or not golds:
        return False
    stated = config.match == "stated"
    need_mv = []
    for gold in golds:
        gold_num = numeric_value(gold)
        if gold_num is None:  # not a plain number: normalized match, then Math-Verify for a mathematical one
            if exact_match(pred, gold):
                return True
            if _MATHY.search(gold):
                need_mv.append(gold)
            continue
        if not stated and exact_match(pred, gold):
            return True
        # a plain-number reference: the stated answer and nothing else (math_verify: a wholly numeric prediction
        # decides here, anything else goes on to Math-Verify); both readings are cached underneath
        pred_num = stated_number(pred) if stated else numeric_value(pred)
        if pred_num is not None and _numbers_equal(gold_num, pred_num, config.rel_tol):
            return True
        if not stated and pred_num is None and _MATHY.search(gold):
            need_mv.append(gold)
    if not config.use_math_verify:
        return False
    failure: MathVerifyError | None = None
    for gold in need_mv:
        try:
            if math_equal(gold, pred, config.timeout_s):
                return True
        except MathVerifyError as exc:
            failure = exc
    if failure is not None:
        raise failure
    return False
