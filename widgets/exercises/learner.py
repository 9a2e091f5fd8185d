"""Running a learner's function and turning anything it raises into a sentence.

A learner's fixed snippet or custom op may raise anything. The check must not
show a traceback: it says which exception, its message, and the line of the
learner's code it came from.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import sysconfig
import threading
import traceback
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from autograd_core.tools.counting import count_ops

from ..feedback.result import Result

# the engine's frames and these lessons' own (widgets/): never the learner's line
_OURS = (str(Path(__file__).resolve().parent.parent.parent / "autograd_core"),
         str(Path(__file__).resolve().parent.parent))
_ENGINE = str(Path(__file__).resolve().parent.parent.parent / "autograd_core")
ENGINE = _ENGINE  # the engine's folder: code from there is the engine's, not the learner's
_NODE = str(Path(_ENGINE) / "recording" / "node.py")  # ctx.save / ctx.load: the op's API
_LESSONS = str(Path(__file__).resolve().parent.parent)  # widgets/
# frames a call is looked through to find who made it: Python's own library and installed
# packages (functools.singledispatch, a NumPy protocol, ...), never the learner's own code
_LIBRARIES = tuple(sorted({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib",
                                                               "purelib", "platlib")}
                          | {str(Path(contextmanager.__code__.co_filename).parent)}))
# the events that start a process (Python's audit events, see sys.addaudithook), and the
# C functions that do it, as ctypes would look them up
PROCESS_EVENTS = frozenset({"os.fork", "os.forkpty", "os.exec", "os.spawn", "os.posix_spawn",
                            "os.system", "subprocess.Popen", "pty.spawn"})
PROCESS_FUNCTIONS = frozenset({"fork", "vfork", "clone", "clone3", "execve", "execv",
                               "execvp", "system", "popen", "posix_spawn", "posix_spawnp"})
# Other libraries that differentiate (symbolically or automatically): a learner's answer that
# calls one has the derivative worked out for it, as one that calls the engine has.
_OTHER_ENGINES = {name: tuple(spec.submodule_search_locations or ())
                  for name in ("sympy", "mpmath", "numdifftools", "torch", "jax", "autograd",
                               "tensorflow")
                  if (spec := importlib.util.find_spec(name)) is not None}
_OTHER_FOLDERS = tuple(folder for folders in _OTHER_ENGINES.values() for folder in folders)
_WATCHED = [0]  # how many watched calls of a learner's function are running (any thread)
_HOOKED: list[bool] = []  # the audit hook is added once per process (it cannot be removed)


class RaisedElsewhere(Exception):
    """The learner's code raised in another process (the autograder's sandbox): what it
    raised, said there with :func:`describe` and :func:`where_it_failed`."""

    def __init__(self, description: str, where: str, not_implemented: bool = False):
        super().__init__(description)
        self.description, self.where, self.not_implemented = description, where, not_implemented


class Refused(KeyError):
    """Raised by what a check hands the learner's code (the arrays an op kept) when that
    code asks for something it was not given: ``sentence`` ends "Your function ..." in
    the learner's terms, ``code`` is the diagnosis, ``hint`` the way out."""

    def __init__(self, sentence: str, code: str, hint: str = ""):
        super().__init__(sentence)
        self.sentence, self.code, self.hint = sentence, code, hint

    def __str__(self) -> str:
        return self.sentence


class LearnerCodeFailed(Exception):
    """The learner's code raised; ``sentence`` says what and where, ``error`` is the original."""

    def __init__(self, sentence: str, error: BaseException, code: str = "raised"):
        super().__init__(sentence)
        self.sentence, self.error, self.code = sentence, error, code


def where_it_failed(error: BaseException) -> str:
    """'line 3 of your code: `return g * s`' for the innermost frame outside the engine."""
    frames = traceback.extract_tb(error.__traceback__)
    theirs = [f for f in frames if not f.filename.startswith((*_OURS, *_LIBRARIES))
              and "numpy" not in f.filename]
    if not theirs:
        return ""
    f = theirs[-1]
    code = f" `{f.line.strip()}`" if f.line else ""
    return f" (in {f.name}, line {f.lineno}:{code})"


def describe(error: BaseException) -> str:
    """``TypeError: unsupported operand...`` on one line, at most 200 characters."""
    message = str(error).splitlines()[0] if str(error) else ""
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def call(fn: Callable, *args, what: str = "", **kwargs):
    """``fn(*args, **kwargs)``, or ``LearnerCodeFailed`` with a sentence if it raises.
    ``what`` names the function in the sentence (e.g. "grads")."""
    what = f"your function `{what}`" if what else "your function"
    if fn is None:  # the placeholder of an exercise cell: nothing written yet
        raise LearnerCodeFailed(f"{what} is None, so there is nothing to check yet: define "
                                "it and pass the function itself.", TypeError(), "none")
    if not callable(fn):
        raise LearnerCodeFailed(f"{what} should be a function, but it is "
                                f"{type(fn).__name__} ({fn!r:.40}).", TypeError(), "type")
    try:
        return fn(*args, **kwargs)
    except NotImplementedError as error:
        raise LearnerCodeFailed(f"{what} raised NotImplementedError: it is not written yet"
                                f"{where_it_failed(error)}.", error, "none") from None
    except Refused as error:  # the check's stand-in says itself what was asked of it
        raise LearnerCodeFailed(f"{what} {error.sentence}{where_it_failed(error)}.", error,
                                error.code) from None
    except RaisedElsewhere as error:
        if error.not_implemented:
            raise LearnerCodeFailed(f"{what} raised NotImplementedError: it is not written "
                                    f"yet{error.where}.", error, "none") from None
        raise LearnerCodeFailed(f"{what} raised {error.description}{error.where}.",
                                error) from None
    except Exception as error:  # anything a learner's code raises becomes feedback
        raise LearnerCodeFailed(f"{what} raised {describe(error)}{where_it_failed(error)}.",
                                error) from None


def by_hand(fn: Callable, *args, what: str = "", **kwargs):
    """:func:`call` for an answer the learner computes themselves, in NumPy: if ``fn`` ran
    any engine op (here, or in the autograder's sandbox) or called the engine's own code
    (its array-level backward functions too, which run no op), ``LearnerCodeFailed`` with
    the code ``"uses_engine"``; likewise if ``fn`` is itself one of the engine's functions
    (``engine.sum_to`` handed in as the learner's). The engine computing the derivative is
    the check's answer, not the learner's."""
    own = _engine_function(fn)
    if own is not None:
        named = f"Your {what}" if what else "Your function"
        raise LearnerCodeFailed(f"{named} is the engine's own code ({own}): work it out "
                                "yourself, in plain Python and NumPy on what it gets.",
                                RuntimeError("engine"), "uses_engine")
    failed = None
    try:
        out, used = watch_engine_use(lambda: call(fn, *args, what=what, **kwargs),
                               elsewhere=lambda: engine_ops_elsewhere(fn))
    except LearnerCodeFailed as exc:  # engine use, if any, is said first
        failed, used = exc, getattr(exc, "engine_use", None)
    if failed is not None and (failed.code == "none" or used is None):
        raise failed
    if used is not None:
        named = f"Your {what}" if what else "Your function"
        raise LearnerCodeFailed(f"{named} {used}: work it out yourself, in plain Python and "
                                "NumPy on what it gets.", RuntimeError("engine"), "uses_engine")
    return out


def _engine_function(fn) -> str | None:
    """``"module.function"`` if ``fn`` (or what it wraps: a bound method, a partial) is
    defined in the engine, else None."""
    seen = 0
    while fn is not None and seen < 8:
        code = getattr(fn, "__code__", None)
        if code is not None:
            if code.co_filename.startswith(_ENGINE):
                return f"{Path(code.co_filename).stem}.{getattr(code, 'co_qualname', code.co_name)}"
            return None
        fn = getattr(fn, "__func__", None) or getattr(fn, "func", None) or getattr(
            fn, "__wrapped__", None)
        seen += 1
    return None


def watch_engine_use(run: Callable[[], Any], elsewhere: Callable[[], int] = lambda: 0
               ) -> tuple[Any, str | None]:
    """``run()`` (the learner's code) and how it used the engine, as the end of a sentence
    ("runs engine ops (3 of them)", "calls the engine's own code (conv.input_grad)"), or
    None. ``elsewhere()`` adds the ops it ran in another process. If ``run`` raises, the
    exception carries the same sentence end as its ``engine_use`` attribute."""
    with count_ops() as counts, engine_calls() as called, no_new_process():
        try:
            out = run()
        except Exception as exc:
            with contextlib.suppress(AttributeError):  # an exception without a __dict__
                exc.engine_use = _how(counts.total_ops + elsewhere(), called)
            raise
    return out, _how(counts.total_ops + elsewhere(), called)


def _how(ops: int, called: list[str]) -> str | None:
    if ops:
        return f"runs engine ops ({ops} of them)"
    if called and called[0].split(".")[0] in _OTHER_ENGINES:
        return f"calls {called[0].split('.')[0]}, which works the derivatives out for it"
    if called:
        return f"calls the engine's own code ({called[0]})"
    return None


def without(fn: Callable, *args, forbidden: Collection[str], what: str = "", **kwargs):
    """:func:`call`, but ``LearnerCodeFailed`` (code ``"library"``) if ``fn`` called one of
    the engine functions named in ``forbidden`` (D3's my_hvp may not call hvp itself)."""
    with engine_calls(only=forbidden) as called, no_new_process():
        out = call(fn, *args, what=what, **kwargs)
    if called:
        named = f"Your {what}" if what else "Your function"
        raise LearnerCodeFailed(f"{named} calls the engine's own {called[0].split('.')[-1]}: "
                                "the item asks you to build it yourself.",
                                RuntimeError("library"), "library")
    return out


@contextmanager
def engine_calls(only: Collection[str] = ()) -> Iterator[list[str]]:
    """The engine functions the learner's own code calls while the block runs (a call into
    ``autograd_core`` made by a frame outside the engine and outside these lessons' package,
    looked for through Python's library and installed packages, so that
    ``functools.singledispatch(engine_function)`` is the learner's call too, and in threads
    the block starts), as ``"module.function"`` names; ``only`` keeps just the functions of
    those names. A node's ``ctx`` API (save, load, params) is not counted: it is how an op
    written by the learner talks to the engine."""
    found: list[str] = []
    previous = sys.getprofile()

    def watch(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if (code.co_filename.startswith(_ENGINE) and code.co_filename != _NODE
                    and (not only or code.co_name in only) and _called_by_the_learner(frame)):
                module = Path(code.co_filename).stem
                found.append(f"{module}.{getattr(code, 'co_qualname', code.co_name)}")
            elif (not only and _OTHER_FOLDERS and code.co_filename.startswith(_OTHER_FOLDERS)
                  and not frame.f_back.f_code.co_filename.startswith(_OTHER_FOLDERS)
                  and _called_by_the_learner(frame)):
                found.append(f"{_library_of(code.co_filename)}.{code.co_name}")
            elif not only and code.co_filename.startswith("<lambdifygenerated"):
                found.append("sympy.lambdify")  # a formula sympy derived, as NumPy code
        if previous is not None:
            previous(frame, event, arg)

    previous_in_threads = threading.getprofile()
    every_thread = getattr(threading, "setprofile_all_threads", None)  # Python 3.12+
    sys.setprofile(watch)
    threading.setprofile(watch)
    if every_thread is not None:
        every_thread(watch)
    try:
        yield found
    finally:
        if every_thread is not None:
            every_thread(previous)
        sys.setprofile(previous)
        threading.setprofile(previous_in_threads)


@contextmanager
def no_new_process() -> Iterator[None]:
    """Run the block alone, where its use of the engine is seen: refuse (``PermissionError``)
    any process started in it, and refuse to start (``LearnerCodeFailed``, code "thread")
    while a thread that runs the learner's code is alive, since a thread started before
    the block is not watched (Python 3.12 and later watch it all the same)."""
    busy = _a_learners_thread()
    if busy is not None:
        raise LearnerCodeFailed(
            f"A thread your code started is still running (in {busy}): a check runs your "
            "function alone, where it can see what it does. Stop that thread (or restart "
            "the kernel), then check again.", RuntimeError("thread"), "thread")
    _refuse_processes_while_watched()
    _WATCHED[0] += 1
    try:
        yield
    finally:
        _WATCHED[0] -= 1


def _a_learners_thread() -> str | None:
    """The function another live thread is running of the learner's code, if any."""
    me = threading.get_ident()
    for ident, frame in sys._current_frames().items():
        while ident != me and frame is not None:
            name = frame.f_code.co_filename
            if not name.startswith((_ENGINE, _LESSONS, *_LIBRARIES, "<frozen")):
                return f"`{frame.f_code.co_name}`"
            frame = frame.f_back
    return None


def _library_of(filename: str) -> str:
    return next(name for name, folders in _OTHER_ENGINES.items()
                if filename.startswith(folders))


def _called_by_the_learner(frame) -> bool:
    """Whether the engine function running in ``frame`` was called by the learner's code
    (not by the engine calling itself, nor by these lessons' code: a check)."""
    return learners_code(frame.f_back)


def learners_code(frame, through: tuple[str, ...] = ()) -> bool:
    """Whether ``frame`` is the learner's code, looking through (outwards) Python's library,
    installed packages and the files or folders ``through``: the first frame that is none
    of those is neither the engine's nor these lessons' own."""
    while frame is not None and frame.f_code.co_filename.startswith(
            (*_LIBRARIES, "<frozen", *through)):
        frame = frame.f_back
    return frame is not None and not frame.f_code.co_filename.startswith((_ENGINE, _LESSONS))


def _refuse_processes_while_watched() -> None:
    """Add (once) the audit hook that refuses a new process while a learner's function is
    watched: the engine run in a child process would not be seen."""
    if _HOOKED:
        return
    _HOOKED.append(True)

    def refuse(event: str, args) -> None:
        if not _WATCHED[0]:
            return
        if event in PROCESS_EVENTS or (event == "ctypes.dlsym"
                                       and str(args[-1]).strip("_") in PROCESS_FUNCTIONS):
            raise PermissionError("a check runs your function in this process, where it can "
                                  "see what it does: it may not start another process")

    sys.addaudithook(refuse)


def engine_ops_elsewhere(fn) -> int:
    """Engine ops that the last call of ``fn`` ran in another process (the autograder's
    sandbox runs a learner's function there); 0 for an ordinary function."""
    ops = getattr(fn, "engine_ops_of_last_call", 0)
    return ops if isinstance(ops, int) else 0


def failed(exc: LearnerCodeFailed, name: str = "", hint: str = "") -> Result:
    """The Result for code that raised."""
    if not hint and isinstance(exc.error, Refused):
        hint = exc.error.hint
    if not hint:
        hint = ("Derive it on paper first; then write each line with NumPy."
                if exc.code == "uses_engine" else
                "Use only what the question names." if exc.code == "library" else
                "threading.enumerate() lists the threads that run; one started as a daemon "
                "ends when the kernel restarts." if exc.code == "thread" else
                "Run your function on its own in a cell to see the full traceback.")
    return Result(False, exc.sentence[:1].upper() + exc.sentence[1:], name=name,
                  diagnosis=exc.code, hint=hint)
