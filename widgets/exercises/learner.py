"""Running a learner's function and turning anything it raises into a sentence.

A learner's fixed snippet or custom op may raise anything. The check must not
show a traceback: it says which exception, its message, and the line of the
learner's code it came from.
"""

from __future__ import annotations

import contextlib
import decimal
import fractions
import importlib.util
import re
import sys
import sysconfig
import threading
import traceback
import types
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from autograd_core.tools.counting import count_ops

from ..feedback.result import Result

# the engine's frames and these lessons' own (widgets/): never the learner's line
_OURS = (str(Path(__file__).resolve().parent.parent.parent / "autograd_core"),
         str(Path(__file__).resolve().parent.parent))
_ENGINE = str(Path(__file__).resolve().parent.parent.parent / "autograd_core")
ENGINE = _ENGINE  # the engine's folder: code from there is the engine's, not the learner's
_NODE = str(Path(_ENGINE) / "recording" / "node.py")  # ctx.save / ctx.load: the op's API
_LESSONS = str(Path(__file__).resolve().parent.parent)  # widgets/
_NOT_THE_LEARNERS = (*_OURS, "<frozen")  # (with _LIBRARIES, looked at first)
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


def _folder_of(module: str) -> str:
    """Where an installed module's files are ('' if it is not installed)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return ""
    origin = spec.origin if spec is not None else None
    if spec is None or not origin:
        return ""
    return str(Path(origin).parent) if spec.submodule_search_locations else origin


# Libraries that measure a derivative numerically (finite differences, a complex step): a
# learner's answer that calls one has the derivative measured for it. A whole module (by
# its file or folder), or named functions of one: (module, functions or () for all).
_MEASURING = tuple((where, names) for module, names in (
    ("scipy.differentiate", ()), ("scipy.optimize._numdiff", ()),
    ("scipy.optimize._optimize", ("approx_fprime", "check_grad", "_approx_fprime_helper")),
    ("numpy.lib._function_base_impl", ("gradient",)), ("numpy.lib.function_base", ("gradient",)))
    if (where := _folder_of(module)))
# NumPy's functions that compute in complex numbers where the input is real (np.emath)
_COMPLEX_MODULES = tuple(where for module in ("numpy.lib._scimath_impl", "numpy.lib.scimath")
                         if (where := _folder_of(module)))
# What in a learner's code says it computes with complex numbers: a name it reads (an
# attribute or a global), or a string NumPy reads as a complex dtype ("complex128", "c16").
_COMPLEX_NAMES = frozenset({"imag", "complex", "complex64", "complex128", "complex256",
                            "complexfloating", "csingle", "cdouble", "clongdouble", "emath",
                            "scimath", "iscomplexobj"})
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
    the check's answer, not the learner's. So is a library that differentiates (sympy,
    PyTorch) or measures derivatives (``scipy.differentiate``, ``np.gradient``): code
    ``"uses_engine"`` too; and a complex step, ``f(x + 1e-20j).imag / 1e-20``, which
    measures a derivative to machine precision: any complex arithmetic in the learner's
    code gets the code ``"complex"``."""
    own = _engine_function(fn)
    if own is not None:
        named = f"Your {what}" if what else "Your function"
        raise LearnerCodeFailed(f"{named} is the engine's own code ({own}): work it out "
                                "yourself, in plain Python and NumPy on what it gets.",
                                RuntimeError("engine"), "uses_engine")
    failed = None
    try:
        out, used = watch_engine_use(lambda: call(fn, *args, what=what, **kwargs),
                               elsewhere=lambda: used_elsewhere(fn))
    except LearnerCodeFailed as exc:  # engine use, if any, is said first
        failed, used = exc, getattr(exc, "engine_use", None)
    if failed is not None and (failed.code == "none" or used is None):
        raise failed
    if used is not None:
        named = f"Your {what}" if what else "Your function"
        how = ("in real numbers" if used.code == "complex" else
               "in plain Python and NumPy on what it gets")
        raise LearnerCodeFailed(f"{named} {used}: work it out yourself, {how}.",
                                RuntimeError("engine"), used.code)
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


def watch_engine_use(run: Callable[[], Any],
                     elsewhere: Callable[[], EngineUse | None] = lambda: None,
                     ran: Counter | None = None, *, new_processes: bool = False
                     ) -> tuple[Any, EngineUse | None]:
    """``run()`` (the learner's code) and how it used the engine, as the end of a sentence
    ("runs engine ops (3 of them)", "calls the engine's own code (conv.input_grad)"), or
    how else it had the derivative worked out or measured for it (another library, complex
    arithmetic: the :class:`EngineUse`'s ``code`` says which), or None. ``elsewhere()``
    says the same of what it ran in another process. If ``run`` raises, the exception carries the
    same sentence end as its ``engine_use`` attribute. ``ran``, if given, counts how often
    each of the learner's functions ran (by code object). A new process is refused while
    ``run`` runs (the engine run there would not be seen), unless ``new_processes`` (the
    autograder's sandbox, which limits processes itself)."""
    processes = contextlib.nullcontext() if new_processes else no_new_process()
    with count_ops() as counts, engine_calls() as called, processes:
        try:
            out = run()
        except Exception as exc:
            with contextlib.suppress(AttributeError):  # an exception without a __dict__
                exc.engine_use = _how(counts.total_ops, called) or elsewhere()
            raise
        finally:
            if ran is not None:
                ran.update(called.ran)
    return out, _how(counts.total_ops, called) or elsewhere()


class EngineUse(str):
    """How a learner's function had its derivative worked out for it, as the end of a
    sentence; ``code`` is the diagnosis: ``"uses_engine"`` (the engine, or a library that
    differentiates or measures derivatives) or ``"complex"`` (complex arithmetic: a complex
    step measures a derivative to machine precision)."""

    code: str = "uses_engine"
    by: str = "engine"  # or "library" (one that differentiates or measures), "complex"

    def __new__(cls, text: str, by: str = "engine") -> EngineUse:
        made = super().__new__(cls, text)
        made.by = by
        made.code = "complex" if by == "complex" else "uses_engine"
        return made


def _how(ops: int, called: Calls) -> EngineUse | None:
    if ops:
        return EngineUse(f"runs engine ops ({ops} of them)")
    if called and called[0].split(".")[0] in _OTHER_ENGINES:
        return EngineUse(f"calls {called[0].split('.')[0]}, which works the derivatives out "
                         "for it", "library")
    if called:
        return EngineUse(f"calls the engine's own code ({called[0]})")
    if called.measured:
        return EngineUse(f"calls {called.measured[0]}, which measures the derivative "
                         "numerically", "library")
    if called.complex:
        return EngineUse(f"computes with complex numbers ({called.complex}), as a complex step "
                         "does to measure a derivative", "complex")
    if called.precise:
        return EngineUse(f"computes in decimal or fraction arithmetic ({called.precise}), as "
                         "finite differences at high precision do to measure a derivative",
                         "library")
    return None


def without(fn: Callable, *args, forbidden: Collection[str], what: str = "", **kwargs):
    """:func:`call`, but ``LearnerCodeFailed`` (code ``"library"``) if ``fn`` called one of
    the engine functions named in ``forbidden`` (D3's my_hvp may not call hvp itself), or a
    library's numerical derivative (B1's my_gradcheck may not call
    ``scipy.differentiate``)."""
    with engine_calls(only=forbidden) as called, no_new_process():
        out = call(fn, *args, what=what, **kwargs)
    named = f"Your {what}" if what else "Your function"
    if called:
        raise LearnerCodeFailed(f"{named} calls the engine's own {called[0].split('.')[-1]}: "
                                "the item asks you to build it yourself.",
                                RuntimeError("library"), "library")
    if called.measured:
        raise LearnerCodeFailed(f"{named} calls {called.measured[0]}, which measures the "
                                "derivative for it: the item asks you to build it yourself.",
                                RuntimeError("library"), "library")
    return out


class Calls(list):
    """What :func:`engine_calls` saw: the engine functions called (the list itself), the
    numerical-derivative functions called (``measured``), where the learner's code computed
    with complex numbers (``complex``, '' if nowhere), where it computed in decimal or
    fraction arithmetic (``precise``: finite differences at any precision) and how often
    each of the learner's own functions ran (``ran``, by code object)."""

    def __init__(self) -> None:
        super().__init__()
        self.measured: list[str] = []
        self.complex = ""
        self.precise = ""
        self.ran: Counter = Counter()


@contextmanager
def engine_calls(only: Collection[str] = ()) -> Iterator[Calls]:
    """The engine functions the learner's own code calls while the block runs (a call into
    ``autograd_core`` made by a frame outside the engine and outside these lessons' package,
    looked for through Python's library and installed packages, so that
    ``functools.singledispatch(engine_function)`` is the learner's call too, and in threads
    the block starts), as ``"module.function"`` names; ``only`` keeps just the functions of
    those names. A node's ``ctx`` API (save, load, params) is not counted: it is how an op
    written by the learner talks to the engine. The calls of a library that measures
    derivatives numerically are noted too (``.measured``); without ``only``, so is the
    learner's code computing with complex numbers (``.complex``: a complex constant or name
    in the code of a learner's function that ran, a complex value it returned or held, or
    ``np.emath``), and how often each learner's function ran (``.ran``)."""
    found = Calls()
    previous = sys.getprofile()

    def watch(frame, event, arg):
        if event == "call":
            code = frame.f_code
            name = code.co_filename
            if (name.startswith(_ENGINE) and name != _NODE
                    and (not only or code.co_name in only) and _called_by_the_learner(frame)):
                module = Path(name).stem
                found.append(f"{module}.{getattr(code, 'co_qualname', code.co_name)}")
            elif (not only and _OTHER_FOLDERS and name.startswith(_OTHER_FOLDERS)
                  and not frame.f_back.f_code.co_filename.startswith(_OTHER_FOLDERS)
                  and _called_by_the_learner(frame)):
                found.append(f"{_library_of(name)}.{code.co_name}")
            elif not only and name.startswith("<lambdifygenerated"):
                found.append("sympy.lambdify")  # a formula sympy derived, as NumPy code
            elif name.startswith(_LIBRARIES):
                measured = _measuring(code)
                if measured and _called_by_the_learner(frame):
                    found.measured.append(measured)
                elif (not only and _COMPLEX_MODULES and name.startswith(_COMPLEX_MODULES)
                      and code.co_name != "<module>" and not found.complex
                      and _called_by_the_learner(frame)):
                    found.complex = "np.emath"
            elif not only and not name.startswith(_NOT_THE_LEARNERS):
                found.ran[code] += 1  # the learner's own code
        elif event == "return" and not (found.complex and found.precise):
            runs = found.ran.get(frame.f_code)
            if runs is not None:  # a learner's function: what it returns, and (its first
                # few runs, so that a loop over a helper stays cheap) what it holds
                look = runs <= _LOCALS_READ
                found.complex = found.complex or _held(frame, arg, look, _is_complex)
                found.precise = found.precise or _held(frame, arg, look, _is_precise)
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
        if not found.complex:
            found.complex = next(filter(None, map(_complex_in_code, found.ran)), "")
        if not found.precise:
            found.precise = next(filter(None, map(_precise_in_code, found.ran)), "")


def _measuring(code: types.CodeType) -> str:
    """``"scipy.differentiate.derivative"`` if ``code`` is a function of a library that
    measures derivatives numerically (:data:`_MEASURING`), else ''."""
    if code.co_name == "<module>":  # importing the library measures nothing
        return ""
    for where, names in _MEASURING:
        if code.co_filename.startswith(where) and (not names or code.co_name in names):
            module = "numpy" if "numpy" in where else (
                "scipy.optimize" if "optimize" in where else "scipy.differentiate")
            return f"{module}.{code.co_name}"
    return ""


_COMPLEX_TYPES = (complex, np.complexfloating)


def _is_complex(value) -> bool:
    return (isinstance(value, _COMPLEX_TYPES)
            or (isinstance(value, np.ndarray) and value.dtype.kind == "c"))


_LOCALS_READ = 3  # the runs of each learner's function whose variables are looked at


def _is_precise(value) -> bool:
    return (isinstance(value, _PRECISE_TYPES)
            or (isinstance(value, np.ndarray) and value.dtype == object and value.size > 0
                and isinstance(value.flat[0], _PRECISE_TYPES)))


def _held(frame, returned, variables: bool, kind: Callable[[Any], bool]) -> str:
    """Where a learner's function returning ``returned`` holds a value of a ``kind`` ('' if
    nowhere): what it returns, or (``variables``) one of its variables."""
    if kind(returned):
        return f"what `{frame.f_code.co_name}` returns"
    for name, value in frame.f_locals.items() if variables else ():
        if kind(value):
            return f"`{name}` in `{frame.f_code.co_name}`"
    return ""


# Decimal and fraction arithmetic: finite differences with as many digits as one likes
# (an audit's central differences at 60 digits agreed with the engine to 1e-16)
_PRECISE_TYPES = (decimal.Decimal, fractions.Fraction)
_PRECISE_NAMES = frozenset({"Decimal", "decimal", "getcontext", "localcontext", "Fraction",
                            "fractions"})


def _precise_in_code(code: types.CodeType) -> str:
    """A name in ``code`` (or a function defined in it) that says it computes in decimal or
    fraction arithmetic (``Decimal``, ``getcontext``, ``Fraction``); '' if none."""
    named = sorted(_PRECISE_NAMES.intersection(code.co_names))
    if named:
        return f"`{named[0]}` in `{code.co_name}`"
    inner = (_precise_in_code(c) for c in code.co_consts if isinstance(c, types.CodeType))
    return next(filter(None, inner), "")


# a string NumPy reads as a complex dtype ("complex128", "c16"; "complex" and single letters
# such as "D" are left out: a learner's code may compare a name with "complex" or call a
# part "D", and a complex array it makes is seen as a value all the same)
_COMPLEX_DTYPE = re.compile(r"[<>=|]?(complex(64|128|256)|c(8|16|32))")


def _complex_in_code(code: types.CodeType) -> str:
    """What in ``code`` (or a function defined in it) says it computes with complex
    numbers: a complex constant (``1e-20j``), a name (``.imag``, ``np.complex128``,
    ``np.emath``), a complex dtype's name; '' if nothing."""
    for const in code.co_consts:
        if isinstance(const, complex):
            return f"`{const!r}` in `{code.co_name}`"
        if isinstance(const, str) and _COMPLEX_DTYPE.fullmatch(const):
            return f"`{const!r}` in `{code.co_name}`"
        if isinstance(const, types.CodeType):
            inner = _complex_in_code(const)
            if inner:
                return inner
    named = sorted(_COMPLEX_NAMES.intersection(code.co_names))
    return f"`{named[0]}` in `{code.co_name}`" if named else ""


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


def used_elsewhere(fn) -> EngineUse | None:
    """How the last call of ``fn`` had its derivative worked out for it in another process
    (the autograder's sandbox runs a learner's function there and says so: engine ops, a
    library, complex arithmetic), or None (an ordinary function, or none of those)."""
    used = getattr(fn, "engine_use_of_last_call", None)
    return used if isinstance(used, EngineUse) else None


def failed(exc: LearnerCodeFailed, name: str = "", hint: str = "") -> Result:
    """The Result for code that raised."""
    if not hint and isinstance(exc.error, Refused):
        hint = exc.error.hint
    if not hint:
        hint = ("Derive it on paper first; then write each line with NumPy."
                if exc.code in ("uses_engine", "complex") else
                "Use only what the question names." if exc.code == "library" else
                "threading.enumerate() lists the threads that run; one started as a daemon "
                "ends when the kernel restarts." if exc.code == "thread" else
                "Run your function on its own in a cell to see the full traceback.")
    return Result(False, exc.sentence[:1].upper() + exc.sentence[1:], name=name,
                  diagnosis=exc.code, hint=hint)
