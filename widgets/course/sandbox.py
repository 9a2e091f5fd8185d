"""Running a learner's function again, in a process of its own, for the autograder.

A graded answer can be a function the learner wrote (``G12(backprop)``, ``D1(d2_tanh)``).
The autograder's checks must call it, but must not run in a process where the
learner's code ran (it could patch them). So the learner's code cells run again in a
sandbox process (an IPython shell, cell by cell, as the kernel ran them), the function
each check was given is kept, and the checks call a :class:`SandboxedFunction`: its
arguments go to the sandbox as data, and only the value the function returns comes
back (as data, see ``answers.encode``), or what it raised, in the words the lesson
would use. Whatever the learner's code patches in the sandbox changes nothing the
autograder decides.

Messages are JSON, one per line: requests on the sandbox's stdin, replies on a copy of
its stdout taken before any learner code runs (the learner's prints go to stderr).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from widgets.exercises.learner import RaisedElsewhere

from .answers import ANSWERS_ENV, Unencodable, decode, encode, python_running

CALL_SECONDS = 60.0  # one call of a learner's function
REPLAY_SECONDS = 600.0  # running the submission's cells again


class NotRegradable(BaseException):
    """The answer cannot be graded outside the notebook's kernel (an argument or a value
    that is not plain data). A BaseException, so that no check turns it into feedback."""


class SandboxFailed(Exception):
    """The sandbox stopped, or did not answer in time."""


def _skip(source: str) -> bool:
    """Cells the sandbox does not run again: the grader's own (otter's set-up, checks)."""
    return "otter" in source or source.lstrip().startswith("grader.")


# -- inside the sandbox ----------------------------------------------------------------


def serve() -> None:  # pragma: no cover - runs in the sandbox process (tests drive it)
    """The sandbox's loop: replay cells, keep functions, answer calls, until stdin ends."""
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from IPython.core.interactiveshell import InteractiveShell

    from autograd_core.tools.counting import count_ops
    from widgets.exercises.learner import describe, where_it_failed

    class Shell(InteractiveShell):
        def enable_gui(self, gui=None):
            """No event loop to hook here: ``%matplotlib inline`` (the lessons' set-up
            cells start with it) only selects matplotlib's inline backend."""

    shell = Shell.instance()
    kept: dict[tuple[int, str], object] = {}
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "replay":
            done = -1
            for capture in request["captures"]:
                for cell in request["cells"]:
                    if done < cell["cell"] <= capture["cell"] and not _skip(cell["source"]):
                        shell.run_cell(cell["source"], store_history=True)
                done = max(done, capture["cell"])
                for name in capture["names"]:
                    kept[capture["record"], name] = shell.user_ns.get(name)
            reply = {"kept": [[r, n] for (r, n), fn in kept.items() if callable(fn)]}
        else:
            fn = kept.get((request["record"], request["name"]))
            try:
                args = decode(request["args"])
                kwargs = decode(request["kwargs"])
                with count_ops() as counts:
                    value = fn(*args, **kwargs)
                reply = {"value": encode(value), "engine_ops": counts.total_ops}
            except Unencodable as why:
                reply = {"unencodable": str(why)}
            except Exception as error:  # noqa: BLE001 - said back in the lesson's words
                reply = {"raised": describe(error), "where": where_it_failed(error),
                         "not_implemented": isinstance(error, NotImplementedError)}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()



# -- the autograder's side ---------------------------------------------------------------


class Sandbox:
    """One sandbox process for one submission's functions."""

    def __init__(self, cells: list[dict], captures: list[dict], workdir: Path, root: Path):
        env = {k: v for k, v in os.environ.items() if k != ANSWERS_ENV}
        env["AUTOGRAD_LESSONS_PROGRESS"] = str(workdir / "progress")
        env["MPLBACKEND"] = "Agg"
        self.process = subprocess.Popen(
            python_running(root, "from widgets.course.sandbox import serve; serve()"),
            cwd=workdir, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        reply = self._ask({"op": "replay", "cells": cells, "captures": captures},
                          REPLAY_SECONDS)
        self.kept = {(r, n) for r, n in reply["kept"]}

    def _ask(self, request: dict, seconds: float) -> dict:
        if self.process.poll() is not None:
            raise SandboxFailed("the sandbox had stopped")
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise SandboxFailed("the sandbox had stopped") from None
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.process.stdout], [], [], left)[0]:
                self.close()
                raise SandboxFailed(f"it did not return within {seconds:.0f} s")
            line = self.process.stdout.readline()
            if not line:
                raise SandboxFailed("the sandbox stopped while running it")
            try:
                reply = json.loads(line)
            except ValueError:
                continue  # not a reply (written by the learner's code to the reply pipe)
            if isinstance(reply, dict):
                return reply

    def function(self, record: int, name: str) -> SandboxedFunction:
        """The learner's function ``name`` as it was when record ``record`` was made."""
        return SandboxedFunction(self, record, name)

    def close(self) -> None:
        """Stop the sandbox process."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:  # pragma: no cover - a pipe already broken
                pass


class SandboxedFunction:
    """Stands in for a learner's function: calls it in the sandbox, on data."""

    def __init__(self, sandbox: Sandbox, record: int, name: str):
        self.sandbox, self.record, self.__name__ = sandbox, record, name
        self.__qualname__ = name
        self.engine_ops_of_last_call = 0

    def __call__(self, *args, **kwargs):
        if (self.record, self.__name__) not in self.sandbox.kept:
            raise RaisedElsewhere(f"NameError: name {self.__name__!r} is not defined when "
                                  "the notebook runs from the top", "")
        try:
            request = {"op": "call", "record": self.record, "name": self.__name__,
                       "args": encode(list(args)), "kwargs": encode(kwargs)}
        except Unencodable as why:
            raise NotRegradable(f"the check passes {why} to {self.__name__}") from None
        try:
            reply = self.sandbox._ask(request, CALL_SECONDS)
        except SandboxFailed as why:
            raise RaisedElsewhere(f"TimeoutError: {why}", "") from None
        if "unencodable" in reply:
            raise NotRegradable(f"{self.__name__} returns {reply['unencodable']}")
        if "raised" in reply:
            raise RaisedElsewhere(reply["raised"], reply.get("where", ""),
                                  bool(reply.get("not_implemented")))
        self.engine_ops_of_last_call = int(reply.get("engine_ops", 0))
        return decode(reply["value"])

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"
