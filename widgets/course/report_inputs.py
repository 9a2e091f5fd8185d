"""The class report's inputs: a folder of learners' files, read so that none can stop it.

The folder holds what learners exported (``exercises.export_progress()``, one JSON file
each), otter's grades of their submissions (``results.json``, one folder each), or both.
Any of them may have been edited by hand, cut off by a sync tool, or be something else
entirely. Each file is read on its own, through :mod:`widgets.exercises.safe_reading`
(regular files only, at most :data:`MAX_FILE` bytes, JSON no deeper than its cap), and
field by field: an exported progress file's records are read as the learner's own
progress is (:func:`widgets.exercises.journal.clean_items`), an otter file question by
question. What cannot be read is set aside with a sentence naming the file and why,
never for the whole class, and no file is ever changed.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from ..exercises.journal import clean_items
from ..exercises.safe_reading import parse_json, read_regular
from .otter_results import is_otter_results, items_from_results

MAX_FILE = 1 << 26  # bytes: a learner's export is kilobytes, otter's results a few more


@dataclass(frozen=True)
class Learner:
    """One learner: a name (their chosen one, or the file's or folder's name) and every
    item's record, from exported progress, or from otter's grades (``graded``)."""

    name: str
    items: dict
    graded: bool = False


def learner_files(folder: Path) -> list[Path]:
    """The files a report reads in ``folder``: every ``*.json`` in it and every
    ``*/results.json`` one folder down, in order of their paths. A name is listed whatever
    it turns out to be (a link that loops, a named pipe), so that reading it can say why
    it was left out."""
    found = []
    for entry in _entries(folder):
        if entry.name.endswith(".json"):
            found.append(Path(entry.path))
        else:
            results = Path(entry.path) / "results.json"
            with contextlib.suppress(OSError):
                if entry.is_dir() and os.path.lexists(results):
                    found.append(results)
    return sorted(found, key=lambda path: path.relative_to(folder).as_posix())


def _entries(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError:
        return []


def read_learner(path: Path) -> tuple[Learner, list[str]]:
    """The learner of one exported progress file or otter ``results.json``, and a clause
    for each part of it left out; a ValueError (one clause) saying why it is neither."""
    name = path.parent.name if path.name == "results.json" else path.stem
    try:
        data = parse_json(read_regular(path, MAX_FILE))
    except ValueError as error:
        raise ValueError(f"it is not an exported progress file or otter results "
                         f"({str(error)[:100]})") from None
    if isinstance(data, dict) and isinstance(data.get("items"), dict):
        learner = data.get("learner")
        items, dropped = clean_items(data["items"])
        return Learner(learner if isinstance(learner, str) else name, items), dropped
    if not is_otter_results(data):
        raise ValueError("it is not an exported progress file or otter results (it holds "
                         "neither progress items nor graded tests)")
    try:
        items, unread = items_from_results(data)
    except ValueError as error:
        raise ValueError(f"it is otter results the report cannot read ({error})") from None
    return Learner(name, items, graded=True), unread


def read_folder(folder: Path) -> tuple[list[Learner], list[str]]:
    """Every learner in ``folder`` (see :func:`learner_files`), and a sentence for each file
    left out and for each file read only in part (it is never changed)."""
    learners, skipped = [], []
    for path in learner_files(folder):
        where = path.relative_to(folder).as_posix()
        try:
            learner, dropped = read_learner(path)
        except ValueError as error:
            skipped.append(f"{where} was left out: {error}.")
            continue
        learners.append(learner)
        if dropped:
            more = f" and {len(dropped) - 3} more" if len(dropped) > 3 else ""
            skipped.append(f"{where} was read in part, leaving out {'; '.join(dropped[:3])}"
                           f"{more}.")
    return learners, skipped
