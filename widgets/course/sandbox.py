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

A submission must not take the grading machine with it, so the sandbox runs under limits
(:class:`Limits`), each answered by a sentence in the grade's feedback rather than a
stopped grader:

* **memory**: the address space (``RLIMIT_AS``); an allocation beyond it raises
  ``MemoryError`` in the learner's code, said back with the limit;
* **processor time**: each request (running the cells again, one call) may use so many
  seconds of CPU (``RLIMIT_CPU``'s soft limit, moved on at every request; the kernel sends
  ``SIGXCPU``, which stops the learner's code with a sentence), besides the wall-clock
  time the grader waits;
* **processes**: the sandbox may start a few processes and its children none: an audit
  hook refuses ``fork``, ``exec``, ``spawn``, ``system`` and ``subprocess`` beyond that,
  and the same C functions looked up through ``ctypes``. (``RLIMIT_NPROC`` would count
  every process and thread of the grader's user, and does not apply to root.)

While it runs the cells again, the sandbox also keeps its own record of what they did
that the kernel's progress would count (:func:`_tally_progress`): each try (a wrong check,
a measured candidate), each help or solution shown, and each right check, by item and
cell, as the lessons announce them (``tracking.PROGRESS_EVENT``). The record is an audit
hook's, which the cells can neither remove nor reach (the ways to find its objects,
``gc.get_objects`` and the like, are refused in the sandbox), so ``reset_progress()``
or a progress file written by hand changes nothing in it; ``regrade`` reads it to say
whether a right answer came after seeing the solution, as the lesson would.
"""

from __future__ import annotations

import functools
import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from widgets.exercises.learner import (
    PROCESS_EVENTS,
    PROCESS_FUNCTIONS,
    EngineUse,
    RaisedElsewhere,
    watch_engine_use,
)
from widgets.exercises.tracking import PROGRESS_EVENT

from .answers import ANSWERS_ENV, Unencodable, decode, encode, python_running

CALL_SECONDS = 60.0  # one call of a learner's function
REPLAY_SECONDS = 600.0  # running the submission's cells again
LIMITS_ENV = "AUTOGRAD_LESSONS_SANDBOX_LIMITS"


@dataclass(frozen=True)
class Limits:
    """What the sandbox process may use (see the module docstring)."""

    memory_bytes: int = 4 * 2**30
    call_cpu_seconds: int = 60
    replay_cpu_seconds: int = 600
    processes: int = 4

    def memory_text(self) -> str:
        return f"{self.memory_bytes / 2**30:g} GiB"


LIMITS = Limits()


class CPULimitReached(BaseException):
    """Raised in the sandbox when a request used up its processor time (``SIGXCPU``); a
    BaseException, so that a learner's ``except Exception`` does not swallow it."""


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
    limits = Limits(**json.loads(os.environ.get(LIMITS_ENV, "{}")))
    _limit_memory_and_processes(limits)
    from IPython.core.interactiveshell import InteractiveShell

    from widgets.exercises import tracking
    from widgets.exercises.learner import describe, where_it_failed

    class Shell(InteractiveShell):
        def enable_gui(self, gui=None):
            """No event loop to hook here: ``%matplotlib inline`` (the lessons' set-up
            cells start with it) only selects matplotlib's inline backend."""

    shell = Shell.instance()
    _tally_progress(serve.__code__, tracking._note.__code__)  # before any cell runs
    kept: dict[tuple[int, str], object] = {}
    for line in sys.stdin:
        request = json.loads(line)
        _allow_cpu_seconds(limits.replay_cpu_seconds if request["op"] == "replay"
                           else limits.call_cpu_seconds)
        if request["op"] == "replay":
            done, stopped = -1, None
            for capture in request["captures"]:
                for cell in request["cells"]:
                    if done < cell["cell"] <= capture["cell"] and not _skip(cell["source"]) \
                            and stopped is None:
                        sys.audit(CELL_EVENT, cell["cell"])  # the tally's cell, from here only
                        result = shell.run_cell(cell["source"], store_history=True)
                        if isinstance(result.error_in_exec, CPULimitReached):
                            stopped = (f"TimeoutError: running the notebook again used more "
                                       f"than {limits.replay_cpu_seconds} s of processor "
                                       "time, the grader's limit")
                done = max(done, capture["cell"])
                for name in capture["names"]:
                    kept[capture["record"], name] = shell.user_ns.get(name)
            tally: dict = {}
            sys.audit(READ_EVENT, tally)
            reply = {"kept": [[r, n] for (r, n), fn in kept.items() if callable(fn)],
                     "stopped": stopped, "tally": tally}
        else:
            fn = kept.get((request["record"], request["name"]))
            try:
                args = decode(request["args"])
                kwargs = decode(request["kwargs"])
                # engine ops, calls into the engine's code (which run no op), a library
                # that differentiates or measures, complex arithmetic: as the kernel sees
                value, used = watch_engine_use(functools.partial(fn, *args, **kwargs),
                                               new_processes=True)
                reply = {"value": encode(value),
                         "engine_use": None if used is None else [str(used), used.by]}
            except Unencodable as why:
                reply = {"unencodable": str(why)}
            except CPULimitReached:
                reply = {"raised": f"TimeoutError: it used more than "
                                   f"{limits.call_cpu_seconds} s of processor time, the "
                                   "grader's limit for one call"}
            except MemoryError:
                reply = {"raised": f"MemoryError: it needed more memory than the grader "
                                   f"allows ({limits.memory_text()} in all)"}
            except Exception as error:  # noqa: BLE001 - said back in the lesson's words
                reply = {"raised": describe(error), "where": where_it_failed(error),
                         "not_implemented": isinstance(error, NotImplementedError)}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


# The audit events of the progress tally: the cell being run again, and reading the tally
# (both accepted from serve() alone); what the lessons announce is tracking.PROGRESS_EVENT.
CELL_EVENT, READ_EVENT = "autograd_lessons.sandbox_cell", "autograd_lessons.sandbox_tally"
PROGRESS_KINDS = frozenset({"try", "help", "solution", "right"})
REFUSED_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
MAX_RUNS = 10_000  # runs kept per item: far above what a notebook of the lessons makes


def _tally_progress(owner, announcer) -> None:  # pragma: no cover - in the sandbox
    """Keep, in an audit hook, what the replayed cells announce (``tracking._note``, whose
    code is ``announcer``): per item, runs of ``[cell, kind, count]`` in order, the cell
    being the one ``owner`` (``serve``'s code) said it runs. ``owner`` reads the tally by
    passing a dict to fill. Nothing else can: the hook holds the only reference to it."""
    from collections.abc import MutableMapping

    runs: dict[str, list[list]] = {}
    cell = [-1]
    caller = sys._getframe

    def tally(event: str, args) -> None:
        if event == PROGRESS_EVENT:
            if caller(1).f_code is not announcer:
                return  # announced by the cells themselves: not the lessons' record
            item, kind = args
            if not isinstance(item, str) or kind not in PROGRESS_KINDS:
                return
            kept = runs.setdefault(item, [])
            if kept and kept[-1][0] == cell[0] and kept[-1][1] == kind:
                kept[-1][2] += 1
            elif len(kept) < MAX_RUNS:
                kept.append([cell[0], kind, 1])
        elif event in REFUSED_EVENTS:
            raise PermissionError("the grader does not let a submission walk the "
                                  "interpreter's objects")
        elif event in (CELL_EVENT, READ_EVENT) and caller(1).f_code is owner:
            if event == CELL_EVENT:
                cell[0] = int(args[0])
            elif isinstance(args[0], MutableMapping):
                args[0].update({item: [list(r) for r in kept] for item, kept in runs.items()})

    sys.addaudithook(tally)


def _limit_memory_and_processes(limits: Limits) -> None:  # pragma: no cover - in the sandbox
    """Set the sandbox's memory and process limits, and the handler that turns its CPU
    limit into :class:`CPULimitReached` (see the module docstring)."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    started = [0]
    os.register_at_fork(after_in_child=lambda: started.__setitem__(0, limits.processes))

    def refuse_processes(event: str, args) -> None:
        if event == "ctypes.dlsym" and str(args[-1]).strip("_") in PROCESS_FUNCTIONS:
            raise PermissionError("the grader does not let a submission start processes "
                                  "through ctypes")
        if event in PROCESS_EVENTS and event != "subprocess.Popen" \
                and sys._getframe(1).f_code.co_filename == subprocess.__file__:
            return  # Popen starting its process (Python 3.13: os.posix_spawn): counted once
        if event in PROCESS_EVENTS:
            started[0] += 1
            if started[0] > limits.processes:
                raise PermissionError(f"the grader lets a submission start at most "
                                      f"{limits.processes} processes, and a process it "
                                      "started none")

    sys.addaudithook(refuse_processes)

    def cpu_used_up(*_) -> None:
        raise CPULimitReached

    signal.signal(signal.SIGXCPU, cpu_used_up)


def _allow_cpu_seconds(seconds: int) -> None:  # pragma: no cover - in the sandbox
    """Let the next request use ``seconds`` more of processor time, then SIGXCPU (code
    that never returns to Python is stopped by the grader's wall-clock limit)."""
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    now = int(used.ru_utime + used.ru_stime) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = now + seconds if hard == resource.RLIM_INFINITY else min(now + seconds, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))



# -- the autograder's side ---------------------------------------------------------------


class Sandbox:
    """One sandbox process for one submission's functions."""

    def __init__(self, cells: list[dict], captures: list[dict], workdir: Path, root: Path):
        env = {k: v for k, v in os.environ.items() if k != ANSWERS_ENV}
        env["AUTOGRAD_LESSONS_PROGRESS"] = str(workdir / "sandbox-progress")
        env["MPLBACKEND"] = "Agg"
        env[LIMITS_ENV] = json.dumps(asdict(LIMITS))
        self.process = subprocess.Popen(
            python_running(root, "from widgets.course.sandbox import serve; serve()"),
            cwd=workdir, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        reply = self._ask({"op": "replay", "cells": cells, "captures": captures},
                          REPLAY_SECONDS)
        self.kept = {(r, n) for r, n in reply["kept"]}
        self.stopped = reply.get("stopped")  # why running the cells again stopped early
        # item -> [[cell, kind, count], ...]: what the cells did that progress counts
        self.tally = reply.get("tally") if isinstance(reply.get("tally"), dict) else {}

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
        self.engine_use_of_last_call: EngineUse | None = None

    def __call__(self, *args, **kwargs):
        if (self.record, self.__name__) not in self.sandbox.kept:
            if self.sandbox.stopped:
                raise RaisedElsewhere(self.sandbox.stopped, "")
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
        used = reply.get("engine_use")
        self.engine_use_of_last_call = None if not used else EngineUse(*used)
        return decode(reply["value"])

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"
