"""A graded notebook's answers, written down as data for the autograder to grade again.

When the autograder executes a submission, it points ``AUTOGRAD_LESSONS_ANSWERS`` at a
fresh folder. There, every check an exercise cell runs appends one record to
``answers.jsonl``: the exercise, the check, and the arguments the cell passed, encoded
as plain data (NumPy arrays as bytes with their dtype and shape, numbers, strings,
tuples, lists, dicts, problems), and the cell that ran it. A function the learner wrote is
recorded by its name, and the code cells run so far go to ``cells.jsonl``, so a sandbox
can run the learner's code again and call the function there, and tally what the cells
did before an answer (``sandbox``). ``grader.check`` appends to
``graded.jsonl`` which record it graded. Nothing here is ever unpickled: decoding builds
only arrays, numbers, strings and containers.

The autograder (``regrade``) grades these records with its own copy of the checks, in a
process the submission's code never ran in.
"""

from __future__ import annotations

import base64
import json
import math
import os
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np

from widgets.exercises.problems import Problem, learner_name
from widgets.exercises.safe_reading import parse_json, read_regular

ANSWERS_ENV = "AUTOGRAD_LESSONS_ANSWERS"
ANSWERS, CELLS, GRADED = "answers.jsonl", "cells.jsonl", "graded.jsonl"


class Unencodable(Exception):
    """A value that is not plain data (an op class, a Tensor, an experiment's report)."""


def python_running(root: Path, call: str, *args: str) -> list[str]:
    """The command of a fresh Python that imports this project only from ``root`` (not
    the working folder, not PYTHON* variables, not the user's site) and runs ``call``,
    e.g. ``"from widgets.course.sandbox import serve; serve()"``, with ``args`` in
    ``sys.argv[2:]``."""
    boot = ("import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
            f"sys.path.insert(0, sys.argv[1]); {call}")
    return [sys.executable, "-E", "-s", "-c", boot, str(root), *args]


# -- the codec ---------------------------------------------------------------------------


def encode(value: Any, functions: list[str] | None = None) -> Any:
    """``value`` as JSON-ready data; a function defined in the notebook becomes its name
    (appended to ``functions`` when given, else Unencodable)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (np.ndarray, np.generic)):  # before float: np.float64 is one
        array = np.asarray(value)
        if array.dtype.kind not in "biufc":
            raise Unencodable(f"an array of {array.dtype}")
        return {"$": "ndarray" if isinstance(value, np.ndarray) else "scalar",
                "dtype": array.dtype.str, "shape": list(array.shape),
                "data": base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()}
    if isinstance(value, int):
        return {"$": "int", "v": str(value)}  # any size, and never confused with a float
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$": "float", "v": repr(value)}
    if value is Ellipsis:
        return {"$": "ellipsis"}
    if isinstance(value, (tuple, list)):
        return {"$": type(value).__name__, "items": [encode(v, functions) for v in value]}
    if isinstance(value, dict):
        return {"$": "dict", "items": [[encode(k, functions), encode(v, functions)]
                                       for k, v in value.items()]}
    if isinstance(value, Problem):
        return {"$": "problem", "description": str(value.description),
                "values": encode(dict(value), functions)}
    if (functions is not None and isinstance(value, types.FunctionType)
            and value.__name__.isidentifier() and value.__module__ == "__main__"):
        functions.append(value.__name__)
        return {"$": "function", "name": value.__name__}
    raise Unencodable(f"a {type(value).__name__}")


def decode(data: Any, function=None) -> Any:
    """The value :func:`encode` wrote; ``function(name)`` stands in for a learner's
    function (without it, a function is Unencodable)."""
    if not isinstance(data, dict):
        return data
    kind = data.get("$")
    if kind == "int":
        return int(data["v"])
    if kind == "float":
        return float(data["v"])
    if kind == "ellipsis":
        return Ellipsis
    if kind in ("ndarray", "scalar"):
        array = np.frombuffer(base64.b64decode(data["data"]), dtype=np.dtype(data["dtype"]))
        array = array.reshape(data["shape"]).copy()
        return array if kind == "ndarray" else array[()]
    if kind in ("tuple", "list"):
        items = [decode(v, function) for v in data["items"]]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {decode(k, function): decode(v, function) for k, v in data["items"]}
    if kind == "problem":
        return Problem(data["description"], **decode(data["values"], function))
    if kind == "function" and function is not None:
        return function(data["name"])
    raise Unencodable(f"a record of kind {kind!r}")


# -- the recorder, in the graded notebook's kernel -----------------------------------------


class Recorder:
    """Appends each check's answers (and the cells run so far) to the answers folder."""

    def __init__(self, folder: Path, shell=None):
        self.folder, self.shell = folder, shell
        self.count = 0
        self.cells_written = 0
        self.records: dict[int, tuple[object, int]] = {}  # id(Result) -> (Result, record)

    def _append(self, name: str, entry: dict) -> None:
        with open(self.folder / name, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def _cells_so_far(self) -> int:
        """Write the code cells run since the last record; the index of the running one."""
        history = list(getattr(getattr(self.shell, "history_manager", None),
                               "input_hist_raw", []) or [])
        for index in range(self.cells_written, len(history)):
            self._append(CELLS, {"cell": index, "source": history[index]})
        self.cells_written = len(history)
        return len(history) - 1

    def __call__(self, exercise_id: str, check: str, args: tuple, kwargs: dict,
                 result) -> None:
        self.count += 1
        entry: dict[str, Any] = {"record": self.count, "exercise": exercise_id,
                                 "check": check, "learner": learner_name()}
        functions: list[str] = []
        try:
            entry["args"] = [encode(a, functions) for a in args]
            entry["kwargs"] = {k: encode(v, functions) for k, v in kwargs.items()}
        except Unencodable as why:
            entry = {**entry, "unencodable": str(why)}
        entry["cell"] = self._cells_so_far()  # for the sandbox: functions, progress
        self._append(ANSWERS, entry)
        self.records[id(result)] = (result, self.count)

    def graded(self, question: str, result) -> None:
        """``grader.check(question)`` graded ``result``: note which record that was."""
        kept = self.records.get(id(result))
        record = kept[1] if kept and kept[0] is result else None
        self._append(GRADED, {"question": question, "record": record})


_RECORDER: list[Recorder] = []


def start_recording(shell=None) -> Recorder | None:
    """Record every check's answers in ``$AUTOGRAD_LESSONS_ANSWERS`` (set only while the
    autograder executes a submission); None when it is not set."""
    folder = os.environ.get(ANSWERS_ENV, "").strip()
    if not folder or _RECORDER:
        return _RECORDER[0] if _RECORDER else None
    from widgets.exercises import watch_answers

    recorder = Recorder(Path(folder), shell)
    watch_answers(recorder)
    _RECORDER.append(recorder)
    return recorder


def note_graded(question: str, result) -> None:
    """Tell the recorder (if recording) which Result ``grader.check(question)`` graded."""
    if _RECORDER:
        _RECORDER[0].graded(question, result)


MAX_JSONL_BYTES = 256 * 2**20  # a submission's answers, cells or marks: far above any lesson's


def read_jsonl(path: Path) -> list[dict]:
    """Every JSON object line of ``path``: none if it is missing or cannot be read (not a
    regular file, over ``MAX_JSONL_BYTES``); a line that is not a JSON object, or is nested
    deeper than ``safe_reading.MAX_DEPTH``, is skipped, and the others are kept."""
    try:
        data = read_regular(path, MAX_JSONL_BYTES)
    except ValueError:
        return []
    out = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            entry = parse_json(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out
