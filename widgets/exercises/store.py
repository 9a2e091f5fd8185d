"""Where progress lives: files the learner owns, safe with several kernels at once.

The store is named by ``~/.autograd-lessons/progress.json`` unless the environment
variable ``AUTOGRAD_LESSONS_PROGRESS`` names another path. Progress is written beside
it, in the folder ``progress.journal/``: each kernel appends events to a file of its own
and every kernel reads them all (see :mod:`.journal`), so two lessons open at once never
overwrite each other, on a local disk or on a network home folder, with no lock. A
``progress.json`` written by an earlier version is read as the starting point and never
written again: nothing in it is lost. ``AUTOGRAD_LESSONS_PROGRESS=:memory:`` keeps
progress in memory only, for one kernel: nbval and the notebook regeneration script set
it, so every lesson runs from a fresh start and its stored outputs are the same on every
run. Under pytest with no explicit location, progress is also kept in memory only, so a
test run never writes to a learner's home directory.

What is kept, per question-bank ID::

    {"parts": {"dx:dx": {"ok": true, "ever": true}, ...},   # check:part -> latest, ever right
     "solved": "2026-01-01T10:00:00Z" | null,               # when every part was right
     "solution_seen": "..." | null,                          # when the solution was revealed
     "misses": {"predict:outputs_equal": 1, ...}}            # wrong predictions so far

An earlier file that cannot be read is never overwritten: it is moved aside
(``.corrupt-<time>``) and a sentence says so; a location that cannot be written keeps
progress for this session (and writes it as soon as it can) and says so. Nothing is lost
silently.
"""

from __future__ import annotations

import copy
import os
import sys
import time
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from .journal import Journal, apply, changes, clean_items, empty_entry, merge
from .safe_reading import parse_json, read_regular

ENV = "AUTOGRAD_LESSONS_PROGRESS"
DEFAULT = Path("~/.autograd-lessons/progress.json")
MEMORY_ONLY = (":memory:", "memory")  # values of the variable that keep progress in memory
VERSION = 1
MAX_EARLIER = 1 << 26  # bytes: an earlier progress file is a few kilobytes


@dataclass(frozen=True)
class Attempt:
    """The check running now: which item and check, and whether it is a demonstration
    (a demonstration records nothing and never reveals an answer)."""

    exercise: str
    check: str
    demo: bool = False


# Set by Exercise.run while a check runs, read by the prediction checks.
current: ContextVar[Attempt | None] = ContextVar("current_attempt", default=None)

_NOTICES: list[str] = []  # sentences about the files, shown once by the progress summary


_FIRST: list[Path | None] = []  # the location this kernel first used (a learner's kernel)


def location() -> Path | None:
    """The store's path (its events live in the folder beside it, see
    :func:`journal_folder`), or None when progress is kept in memory only.

    A kernel keeps the location it first used: set ``$AUTOGRAD_LESSONS_PROGRESS`` before
    the kernel starts. Changing it later is said once and changes nothing until the kernel
    restarts; otherwise a solution read, or a try spent, in a store set up for the
    purpose would not be in the learner's progress. (Tests change it freely.)"""
    in_tests = "PYTEST_CURRENT_TEST" in os.environ or "_pytest" in sys.modules
    explicit = os.environ.get(ENV, "").strip()
    if explicit.lower() in MEMORY_ONLY:
        found = None
    elif explicit:
        found = Path(explicit).expanduser()
    else:
        found = None if in_tests else DEFAULT.expanduser()
    if in_tests:
        return found
    if not _FIRST:
        _FIRST.append(found)
    elif found != _FIRST[0]:
        where = "memory only" if _FIRST[0] is None else str(_FIRST[0])
        _notice(f"{ENV} changed after this kernel first used its progress ({where}): "
                "progress stays there until the kernel restarts.")
    return _FIRST[0]


def journal_folder(path: Path) -> Path:
    """The folder of event files of the store named ``path``: ``progress.journal/``
    beside ``progress.json``."""
    return path.with_name(f"{path.stem}.journal")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _notice(sentence: str) -> None:
    if sentence not in _NOTICES:
        _NOTICES.append(sentence)


def notices(clear: bool = True) -> list[str]:
    """Sentences about the progress files (unreadable, moved aside, not writable)."""
    found = list(_NOTICES)
    if clear:
        _NOTICES.clear()
    return found


class _Store:
    """One location's progress: the earlier file, the journal, and the events this
    session could not write yet (or, in memory only, all of them)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.journal = None if path is None else Journal(journal_folder(path))
        self.base: dict | None = None
        self.unsaved: list[dict] = []  # events not written yet (the location failed)
        self.items: dict | None = None  # the merged records, None until read
        self.last_t = 0.0

    def _base(self) -> dict:
        if self.base is None:
            self.base = {"items": {}} if self.path is None else _read_earlier(self.path)
        return self.base

    def current(self) -> dict:
        """Every item's record as all kernels have written it."""
        if self.journal is None:
            if self.items is None:
                self.items = {}
            return self.items
        others_wrote = self.journal.refresh()
        for sentence in self.journal.skipped:
            _notice(sentence)
        self.journal.skipped.clear()
        if others_wrote or self.items is None:
            self.items = merge(self._base(), [*self.journal.events(), *self.unsaved])
        return self.items

    def add(self, events: list[dict]) -> None:
        """Apply ``events`` and write them (with any this session could not write
        before)."""
        items = self.current()
        for event in events:
            apply(items, event)
        if self.journal is None:
            return
        self.unsaved += events
        try:
            self.journal.append(self.unsaved)
        except OSError as exc:
            _notice(f"Your progress could not be saved to {self.journal.folder} "
                    f"({exc.strerror or exc}); it is kept for this session and saved as soon "
                    f"as that works. Set {ENV} to a file you can write.")
            return
        self.unsaved = []

    def stamp(self) -> float:
        """A time for new events, later than every earlier one of this session."""
        self.last_t = max(time.time(), self.last_t + 1e-6)
        return self.last_t


_STORES: dict[str | None, _Store] = {}


def _store() -> _Store:
    path = location()
    key = None if path is None else str(path)
    if key not in _STORES:
        _STORES[key] = _Store(path)
    return _STORES[key]


def _read_earlier(path: Path) -> dict:
    """The progress file an earlier version wrote (``{"items": ...}``), or an empty one;
    an unreadable one is moved aside, never overwritten. Its items are read field by
    field: a field of the wrong type is left out (and said), the file is not changed."""
    if not path.exists() and not path.is_symlink():
        return {"items": {}}
    try:
        text = read_regular(path, MAX_EARLIER)
    except ValueError as exc:  # not a regular file, too large, or not readable
        _notice(f"Your progress file {path} could not be read ({exc}); it is left as it is.")
        return {"items": {}}
    try:
        data = parse_json(text)
        if not isinstance(data, dict) or not isinstance(data.get("items"), dict):
            raise ValueError("it is not a progress file")
    except ValueError as exc:  # read, but not progress: moved aside, kept
        return _set_aside(path, exc)
    items, dropped = clean_items(data["items"])
    if dropped:
        _notice(f"In your progress file {path}, what has the wrong type was left out "
                f"({_listed(dropped)}); the rest was read, and the file is left as it is.")
    return {**data, "items": items}


def _listed(clauses: list[str], most: int = 3) -> str:
    """Up to ``most`` clauses joined, and how many more."""
    shown = "; ".join(clauses[:most])
    return shown + (f" (and {len(clauses) - most} more)" if len(clauses) > most else "")


def _set_aside(path: Path, exc: Exception) -> dict:
    """Move an unreadable file out of the way (never delete it) and start afresh."""
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        path.replace(aside)
        _notice(f"Your progress file {path} could not be read ({str(exc)[:80]}); it was "
                f"kept as {aside.name} and a fresh one was started.")
    except OSError:
        _notice(f"Your progress file {path} could not be read ({str(exc)[:80]}) nor moved "
                "aside; it is left as it is.")
    return {"items": {}}


def read_item(exercise_id: str) -> dict:
    """A copy of one item's record (empty if never checked)."""
    entry = _store().current().get(exercise_id)
    return copy.deepcopy(entry) if entry is not None else empty_entry()


def read_all() -> dict[str, dict]:
    """A copy of every item's record, keyed by ID."""
    return copy.deepcopy(_store().current())


def update(exercise_id: str, change) -> dict:
    """Let ``change(entry)`` edit a copy of one item's record and write what changed, as
    events that add to what other kernels write; returns the edited entry."""
    store = _store()
    before = read_item(exercise_id)
    after = copy.deepcopy(before)
    change(after)
    events = changes(before, after, store.stamp(), exercise_id)
    if events:
        store.add(events)
    return after


def reset() -> None:
    """Forget all progress at the current location (tests, or a learner starting over):
    every kernel's events and the earlier file stay on disk, hidden by a reset event."""
    store = _store()
    store.add([{"t": store.stamp(), "reset": True}])


now = _now
