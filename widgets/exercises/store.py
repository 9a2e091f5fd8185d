"""Where progress lives: a small JSON file the learner owns, written atomically.

The file is ``~/.autograd-lessons/progress.json`` unless the environment variable
``AUTOGRAD_LESSONS_PROGRESS`` names another path. ``AUTOGRAD_LESSONS_PROGRESS=:memory:``
keeps progress in memory only, for one kernel: nbval and the notebook regeneration script
set it, so every lesson runs from a fresh start and its stored outputs are the same on
every run. Under pytest with no explicit location, progress is also kept in memory only,
so a test run never writes to a learner's home directory.

What is kept, per question-bank ID::

    {"parts": {"dx:dx": {"ok": true, "ever": true}, ...},   # check:part -> latest, ever right
     "solved": "2026-01-01T10:00:00Z" | null,               # when every part was right
     "solution_seen": "..." | null,                          # when the solution was revealed
     "misses": {"predict:outputs_equal": 1, ...}}            # wrong predictions so far

A file that cannot be read is never overwritten: it is moved aside (``.corrupt-<time>``)
and a sentence says so; a location that cannot be written keeps progress for this session
and says so. Nothing is lost silently.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

ENV = "AUTOGRAD_LESSONS_PROGRESS"
DEFAULT = Path("~/.autograd-lessons/progress.json")
MEMORY_ONLY = (":memory:", "memory")  # values of the variable that keep progress in memory
VERSION = 1


@dataclass(frozen=True)
class Attempt:
    """The check running now: which item and check, and whether it is a demonstration
    (a demonstration records nothing and never reveals an answer)."""

    exercise: str
    check: str
    demo: bool = False


# Set by Exercise.run while a check runs, read by the prediction checks.
current: ContextVar[Attempt | None] = ContextVar("current_attempt", default=None)

_MEMORY: dict = {}  # the in-memory store (under pytest without a location, or unwritable)
_NOTICES: list[str] = []  # sentences about the file, shown once by the progress summary


def location() -> Path | None:
    """The progress file, or None when progress is kept in memory only."""
    explicit = os.environ.get(ENV, "").strip()
    if explicit.lower() in MEMORY_ONLY:
        return None
    if explicit:
        return Path(explicit).expanduser()
    if "PYTEST_CURRENT_TEST" in os.environ or "_pytest" in sys.modules:  # a test process
        return None
    return DEFAULT.expanduser()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _empty() -> dict:
    return {"version": VERSION, "items": {}}


def _notice(sentence: str) -> None:
    if sentence not in _NOTICES:
        _NOTICES.append(sentence)


def notices(clear: bool = True) -> list[str]:
    """Sentences about the progress file (unreadable, moved aside, not writable)."""
    found = list(_NOTICES)
    if clear:
        _NOTICES.clear()
    return found


def load() -> dict:
    """The whole store (a fresh one if there is no file yet)."""
    path = location()
    if path is None:
        return _MEMORY.setdefault(None, _empty())
    if str(path) in _MEMORY:  # the file could not be written: this session's copy
        return _MEMORY[str(path)]
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):  # nothing saved yet (or nowhere to save)
        return _empty()
    except OSError as exc:
        _notice(f"Your progress file {path} could not be read ({exc.strerror or exc}); "
                "progress is kept for this session only.")
        return _MEMORY.setdefault(str(path), _empty())
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("items"), dict):
            raise ValueError("not a progress file")
        return data
    except ValueError as exc:
        return _set_aside(path, exc)


def _set_aside(path: Path, exc: Exception) -> dict:
    """Move an unreadable file out of the way (never delete it) and start afresh."""
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        path.replace(aside)
        _notice(f"Your progress file {path} could not be read ({str(exc)[:80]}); it was "
                f"kept as {aside.name} and a fresh one was started.")
        return _empty()
    except OSError:
        _notice(f"Your progress file {path} could not be read ({str(exc)[:80]}) nor moved "
                "aside; it is left as it is and progress is kept for this session only.")
        return _MEMORY.setdefault(str(path), _empty())


def save(data: dict) -> None:
    """Write the store atomically (a temporary file in the same folder, then a rename)."""
    path = location()
    if path is None:
        _MEMORY[None] = data
        return
    if str(path) in _MEMORY:
        _MEMORY[str(path)] = data
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".progress-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    except OSError as exc:
        _notice(f"Your progress could not be saved to {path} ({exc.strerror or exc}); it is "
                f"kept for this session only. Set {ENV} to a file you can write.")
        _MEMORY[str(path)] = data


def item(data: dict, exercise_id: str) -> dict:
    """The record of one item in ``data`` (created empty if missing)."""
    entry = data["items"].setdefault(exercise_id, {})
    entry.setdefault("parts", {})
    entry.setdefault("solved", None)
    entry.setdefault("solution_seen", None)
    entry.setdefault("misses", {})
    return entry


def read_item(exercise_id: str) -> dict:
    """A copy of one item's record (empty if never checked)."""
    data = load()
    return dict(item(data, exercise_id)) if exercise_id in data["items"] else \
        {"parts": {}, "solved": None, "solution_seen": None, "misses": {}}


def update(exercise_id: str, change) -> dict:
    """Load, let ``change(entry)`` edit one item's record, save; returns the entry."""
    data = load()
    entry = item(data, exercise_id)
    change(entry)
    save(data)
    return entry


def reset() -> None:
    """Forget all progress at the current location (tests, or a learner starting over)."""
    path = location()
    _MEMORY.pop(None if path is None else str(path), None)
    if path is not None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


now = _now
