"""The data an exercise works on: named, seeded, read-only arrays with a description.

>>> p = Problem("C = A @ B", A=np.ones((2, 3)), B=np.ones((3, 4)))
>>> p.A.shape, sorted(p)
((2, 3), ['A', 'B'])
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from ..feedback import words
from ..feedback.result import Result


class Problem(Mapping):
    """Named arrays (read-only copies, so a learner's in-place edit cannot corrupt them)
    plus a description of how they fit together. Access as ``p.A`` or ``p["A"]``."""

    def __init__(self, description: str, **values):
        self._description = description
        self._values = {}
        for name, value in values.items():
            if isinstance(value, np.ndarray):
                value = value.copy()
                value.flags.writeable = False
            self._values[name] = value

    def __getattr__(self, name: str):
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"this problem has no {name!r}; it has {', '.join(values)}")

    def __getitem__(self, name: str):
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    @property
    def description(self) -> str:
        return self._description

    def __repr__(self) -> str:
        lines = [self._description]
        for name, v in self._values.items():
            if isinstance(v, np.ndarray):
                lines.append(f"  {name}: shape {words.shape(v.shape)}, {v.dtype}")
            else:
                lines.append(f"  {name} = {v!r}")
        return "\n".join(lines)


LEARNER_ENV = "AUTOGRAD_LESSONS_LEARNER"
_SET = 'Problems are now drawn for "{name}": re-run the cells that show them, then answer.'
_DEFAULT = ("Problems are drawn from the shared default again (the numbers in the stored "
            "lessons): re-run the cells that show them.")
_BAD_NAME = ("set_learner takes a name (a string) or a number, not a {type}; for example "
             'set_learner("ada").')
_learner: list[str | None] = [None]  # set_learner's choice; None: the environment decides


def _clean(name: object) -> str | None:
    if name is None:
        return None
    if not isinstance(name, (str, int)) or isinstance(name, bool):
        raise TypeError(_BAD_NAME.format(type=type(name).__name__))
    text = " ".join(str(name).split()).lower()
    return text or None


def learner_name() -> str | None:
    """The name (or seed) the problems are drawn for; None: the lessons' shared default."""
    if _learner[0] is not None:
        return _learner[0]
    return _clean(os.environ.get(LEARNER_ENV, ""))


def set_learner(name: str | int | None) -> str:
    """Draw every numeric problem for ``name`` (a name or a number), so classmates get
    different numbers for the same exercise; ``None`` goes back to the shared default
    (the numbers in the stored lessons). An instructor can set it for a whole class
    with the environment variable ``AUTOGRAD_LESSONS_LEARNER`` instead. Case and
    spacing do not matter. Returns a sentence saying what changed.

    >>> set_learner("Ada Lovelace")                       # doctest: +SKIP
    'Problems are now drawn for "ada lovelace": re-run the cells that show them, then answer.'
    """
    try:
        cleaned = _clean(name)
    except TypeError as error:
        return str(error)
    _learner[0] = cleaned
    if cleaned is None:
        return _DEFAULT
    return _SET.format(name=cleaned)


def _learner_key(name: str) -> int:
    """A stable number for a name (Python's own ``hash`` changes between runs)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")


# While a check draws a problem nobody was given (see ``unseen``): its secret.
_UNSEEN: ContextVar[int | None] = ContextVar("unseen", default=None)


def new_secret() -> int:
    """A secret for :func:`unseen`, for a check that draws the same unseen data twice."""
    return int.from_bytes(os.urandom(16), "little")


@contextmanager
def unseen(secret: int | None = None) -> Iterator[None]:
    """Inside, every problem is one nobody was given: ``rng(seed)`` draws from ``[seed,
    secret]``, with a secret from ``os.urandom`` made for this block alone (or ``secret``,
    from :func:`new_secret`, to draw the same data again), so a problem drawn here has the
    options (shapes, sizes, ties) of the one asked for and numbers that no learner could
    have worked on beforehand. A check draws its unseen problems here and leaves the block
    before it runs the learner's code on them.

    >>> with unseen():
    ...     a = rng(6).standard_normal(2)
    >>> bool(np.array_equal(a, rng(6).standard_normal(2)))
    False
    """
    token = _UNSEEN.set(new_secret() if secret is None else secret)
    try:
        yield
    finally:
        _UNSEEN.reset(token)


def rng(seed: int) -> np.random.Generator:
    """The seeded generator every problem draws from: the same data on every run, and,
    once a learner is set (``set_learner``), data of their own; inside ``unseen()``, data
    nobody was given."""
    secret = _UNSEEN.get()
    if secret is not None:
        return np.random.default_rng([seed, secret])
    name = learner_name()
    if name is None:
        return np.random.default_rng(seed)
    return np.random.default_rng([seed, _learner_key(name)])


def distinct(generator: np.random.Generator, *shape: int) -> np.ndarray:
    """Normal samples, with no two entries closer than 1e-3 (so max/argmax have no ties)."""
    while True:
        a = generator.standard_normal(shape)
        flat = np.sort(a.ravel())
        if flat.size < 2 or np.min(np.diff(flat)) > 1e-3:
            return a


def problem_for(item: str, make: Callable[..., Problem], **option) -> Problem | Result:
    """``make(**option)``: the other problem a learner (or a lesson's demonstration) asked
    a check to grade, e.g. ``G2(..., size=8)``; or, when ``make`` refuses the option, the
    sentence the check answers with instead of a traceback."""
    try:
        return make(**option)
    except ValueError as error:
        names = " and ".join(option)
        return Result(False, f"{error} Pass the same {names} as to {item}.problem(...).",
                      diagnosis="call")
