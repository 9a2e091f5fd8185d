"""Progress as events in append-only files, one file per kernel, merged when read.

Two kernels (lesson 05 and lesson 07 open at once) must never overwrite each other's
progress. Locks do not help on the network file systems JupyterHub home folders often
live on (NFS does not honour SQLite's or ``fcntl``'s locks reliably), so nothing here
locks: every writer appends to a file **no other process writes**, and a reader merges
all of them. A file with one writer needs no lock on any file system; a line is written
whole with one ``write`` and made durable with ``fsync``.

Each line is one event about one item::

    {"t": 1764676800.123456, "item": "G6", "part": "g:dA", "ok": true, "ever": true}
    {"t": ..., "item": "G6", "miss": "tries:", "by": 1}     # counts add up
    {"t": ..., "item": "G6", "first": {"solution_seen": "2026-12-02T12:00:00Z"}}
    {"t": ..., "item": "G6", "first": {"help_seen": "2026-12-02T11:00:00Z"}}  # a skeleton
    {"t": ..., "item": "G6", "set": {"after_solution": false}}
    {"t": ..., "reset": true}                                 # start over

Merging keeps every event's effect whatever the order the files are read in: ``ever``
is an *or*, counts are sums, "first" fields keep the earliest value, and only a part's
latest ``ok`` and a "set" field depend on time (the event with the later ``t`` wins; a
reset hides everything before it). A line cut off by a crash is left alone until it is
whole; a line that is not an event (not JSON, nested too deep, longer than
:data:`MAX_LINE`, or an event whose fields have the wrong types) is skipped, kept in its
file, and reported once, as is a file of the folder that is not a regular file. An item's
record from an earlier ``progress.json`` is read field by field (:func:`clean_items`):
a field of the wrong type is left out with a sentence, the rest is kept.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import socket
import stat
from collections.abc import Iterable
from pathlib import Path

from .safe_reading import parse_json, read_regular

SUFFIX = ".jsonl"
MAX_LINE = 1 << 16  # bytes: an event is a few hundred; a longer line is no event
MAX_FILE = 1 << 28  # bytes of one kernel's file read at once (years of progress fit)
# "help_seen" (when a skeleton or a measurement helped) is kept only once it happened.
RECORD_FIELDS = ("parts", "misses", "solved", "solution_seen", "help_seen")  # the rest: "set"
FIRST_FIELDS = ("solved", "solution_seen", "help_seen")
MAX_COUNT = 10**9  # tries or mistakes of one item: a larger count is no count of ours


def empty_entry() -> dict:
    """The record of an item nobody has checked."""
    return {"parts": {}, "solved": None, "solution_seen": None, "misses": {}}


def changes(before: dict, after: dict, t: float, item: str) -> list[dict]:
    """The events that turn one item's record ``before`` into ``after``."""
    events = []
    for key, part in after["parts"].items():
        if before["parts"].get(key) != part:
            events.append({"t": t, "item": item, "part": key, "ok": bool(part.get("ok")),
                           "ever": bool(part.get("ever"))})
    for key, count in after["misses"].items():
        grown = count - before["misses"].get(key, 0)
        if grown:
            events.append({"t": t, "item": item, "miss": key, "by": grown})
    first = {k: after[k] for k in FIRST_FIELDS
             if before.get(k) is None and after.get(k) is not None}
    if first:
        events.append({"t": t, "item": item, "first": first})
    settled = {k: v for k, v in after.items()
               if k not in RECORD_FIELDS and before.get(k, None) != v}
    if settled:
        events.append({"t": t, "item": item, "set": settled})
    return events


def merge(base: dict, events: Iterable[dict]) -> dict:
    """Every item's record: the snapshot ``base`` (``{"items": ...}``, an older progress
    file), then ``events`` applied in time order."""
    ordered = sorted(events, key=lambda e: e["t"])
    resets = [i for i, e in enumerate(ordered) if e.get("reset")]
    if resets:
        ordered, items = ordered[resets[-1] + 1:], {}
    else:
        items = {name: _copy(entry) for name, entry in base.get("items", {}).items()}
    for event in ordered:
        apply(items, event)
    return items


def apply(items: dict, event: dict) -> None:
    """Apply one event to every item's records ``items``, in place."""
    if event.get("reset"):
        items.clear()
        return
    entry = items.get(event["item"])
    if entry is None:
        entry = items[event["item"]] = empty_entry()
    _apply(entry, event)


def _copy(entry: dict) -> dict:
    out = {**empty_entry(), **entry}
    out["parts"] = {k: dict(v) for k, v in out["parts"].items()}
    out["misses"] = dict(out["misses"])
    return out


def clean_items(items: object) -> tuple[dict, list[str]]:
    """Every item's record of an earlier or exported progress file, read field by field:
    the fields of the right type kept; and, for a sentence, the name of each item or field
    left out because it has the wrong type (``"item 'G6'"``, ``"'misses' of item 'G6'"``)."""
    if not isinstance(items, dict):
        return {}, ["the items"]
    kept, dropped = {}, []
    for name, entry in items.items():
        if not isinstance(entry, dict):
            dropped.append(f"item {name[:20]!r}")
            continue
        record, bad = clean_entry(entry)
        kept[name] = record
        dropped += [f"{field[:20]!r} of item {name[:20]!r}" for field in bad]
    return kept, dropped


def clean_entry(entry: dict) -> tuple[dict, list[str]]:
    """One item's record with every field of the wrong type left out; and their names."""
    record, bad = empty_entry(), []
    for field, value in entry.items():
        if field == "parts":
            ok = isinstance(value, dict) and all(_is_part(v) for v in value.values())
        elif field == "misses":
            ok = isinstance(value, dict) and all(_is_count(v) for v in value.values())
        elif field in FIRST_FIELDS:
            ok = value is None or isinstance(value, str)
        else:
            ok = _is_scalar(value)
        if ok:
            record[field] = value
        else:
            bad.append(field)
    return record, bad


def _is_part(value) -> bool:
    return isinstance(value, dict) and isinstance(value.get("ok"), bool) \
        and isinstance(value.get("ever"), bool)


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT


def _is_time(value) -> bool:
    """A finite number of seconds (JSON's integers can be too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _is_scalar(value) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def _apply(entry: dict, event: dict) -> None:
    if "part" in event:
        part = entry["parts"].setdefault(event["part"], {"ok": False, "ever": False})
        part["ok"] = event["ok"]
        part["ever"] = part["ever"] or event["ever"] or event["ok"]
    elif "miss" in event:
        entry["misses"][event["miss"]] = entry["misses"].get(event["miss"], 0) + event["by"]
    elif "first" in event:
        for key, value in event["first"].items():
            if entry.get(key) is None:
                entry[key] = value
    elif "set" in event:
        entry.update(event["set"])


def _is_event(value) -> bool:
    """Whether a JSON value is an event whose every field ``apply`` reads has its type."""
    if not isinstance(value, dict):
        return False
    if not _is_time(value.get("t")):
        return False
    if value.get("reset") is True:
        return True
    if not isinstance(value.get("item"), str):
        return False
    if "part" in value:
        return isinstance(value["part"], str) and _is_part(value)
    if "miss" in value:
        by = value.get("by")
        return isinstance(value["miss"], str) and isinstance(by, int) \
            and not isinstance(by, bool) and abs(by) <= MAX_COUNT
    first, settled = value.get("first"), value.get("set")
    if isinstance(first, dict):
        return all(k in FIRST_FIELDS and isinstance(v, str) for k, v in first.items())
    if isinstance(settled, dict):
        return all(k not in RECORD_FIELDS and _is_scalar(v) for k, v in settled.items())
    return False


class Journal:
    """The folder of one store's event files: this process appends to a file of its own
    and reads everyone's, each file from where it last stopped."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._mine: Path | None = None
        self._pid: int | None = None
        self._read: dict[str, tuple[int, list[dict]]] = {}  # file -> (bytes taken, events)
        self.skipped: list[str] = []  # sentences about lines that are not events
        self._unreadable: set[str] = set()  # files already said to be unreadable

    def _own_file(self) -> Path:
        if self._mine is None or self._pid != os.getpid():  # a forked child writes its own
            self._pid = os.getpid()
            name = f"{socket.gethostname()}-{self._pid}-{secrets.token_hex(4)}{SUFFIX}"
            self._mine = self.folder / name
        return self._mine

    def append(self, events: list[dict]) -> None:
        """Write ``events`` at the end of this process's file, durably; raises OSError
        when they could not be written whole (what was written of them is cut off again,
        and the next append starts a new file, so a part of a line never runs into the
        next one)."""
        data = "".join(json.dumps(e, sort_keys=True) + "\n" for e in events).encode()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._own_file(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                size = os.fstat(fd).st_size
                try:
                    if os.write(fd, data) != len(data):
                        raise OSError(28, "the events were written only in part")
                    os.fsync(fd)
                except OSError:
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, size)
                    raise
            finally:
                os.close(fd)
        except OSError:
            self._mine = None
            raise

    def refresh(self) -> bool:
        """Read what every file gained since the last call; whether another process's
        file brought new events (this process's own are known already)."""
        changed = False
        try:
            entries = list(os.scandir(self.folder))
        except OSError:  # no folder yet, or one that cannot be listed: nothing to read
            return False
        for entry in entries:
            if entry.name.endswith(SUFFIX):
                grew = self._take(entry.path)
                changed |= grew and entry.path != str(self._mine)
        return changed

    def events(self) -> list[dict]:
        """Every whole event read so far, from every file."""
        return [e for _, taken in self._read.values() for e in taken]

    def _take(self, path: str) -> bool:
        """Read what the file at ``path`` gained since last time; whether it gained a
        whole line. A file that cannot be read is reported once and left alone."""
        taken, known = self._read.get(path, (0, []))
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                raise ValueError("it is not a regular file (a folder, a named pipe or a device)")
            size = info.st_size
            if size < taken:  # replaced by a shorter file: read it again
                taken, known = 0, []
            if size == taken:
                return False
            chunk = read_regular(path, MAX_FILE, start=taken)
        except FileNotFoundError:
            return False
        except (OSError, ValueError) as exc:
            if path not in self._unreadable:  # said once, not at every read
                self._unreadable.add(path)
                reason = exc if isinstance(exc, ValueError) else \
                    f"it could not be read ({exc.strerror or exc})"
                self.skipped.append(f"{Path(path).name} in the progress folder was not "
                                    f"read: {reason}.")
            return False
        whole = chunk[:chunk.rfind(b"\n") + 1]  # a line still being written waits
        for line in whole.splitlines():  # appended in place: no copy per new line
            value = None
            if len(line) <= MAX_LINE:
                with contextlib.suppress(ValueError):
                    value = parse_json(line)
            if _is_event(value):
                known.append(value)
            elif line.strip():
                self.skipped.append(f"a line of {Path(path).name} is not a progress event "
                                    f"and was skipped (left in the file): {line[:60]!r}")
        self._read[path] = (taken + len(whole), known)
        return bool(whole)
