"""A learner's function run on several cases, each compared with the engine's answer:
the lesson's own numbers first, then others of other sizes, so an array or a size of the
lesson's problem built into the function shows up, with a sentence that says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from autograd_core.tools.counting import count_ops

from ..feedback.result import Result
from . import learner

# One case: (where, make), make() -> (arguments, the engine's answer, context for compare)
Case = tuple[str, Callable[[], tuple[tuple, object, dict]]]


def check_on_cases(fn, label: str, what: str, cases: Sequence[Case],
                   compare: Callable[[object, object, dict], Result], right: str,
                   numpy_only: bool = False) -> Result:
    """Run the learner's ``fn`` on each case (NumPy arguments copied, so it cannot change
    the next case's) and ``compare`` its output with the engine's; the first wrong case
    answers. ``right`` ends the sentence of a function right on every case. With
    ``numpy_only``, a function that runs engine ops is told to write the derivation
    itself (the engine computing it is the check's answer, not the learner's)."""
    for i, (where, make) in enumerate(cases):
        args, expected, ctx = make()
        args = tuple(np.array(a) if isinstance(a, np.ndarray) else a for a in args)
        try:
            with count_ops() as counts:
                out = learner.call(fn, *args, what=what)
        except learner.LearnerCodeFailed as exc:
            return learner.failed(exc, name=label)
        engine_ops = counts.total_ops + learner.engine_ops_elsewhere(fn)
        if numpy_only and engine_ops:
            return Result(False, f"Your {what} runs engine ops ({engine_ops} of them): "
                                 "write the derivation yourself, with NumPy on the arrays "
                                 "it gets.", name=label, diagnosis="uses_engine")
        if out is None:
            return Result(False, f"Your {what} returns None: nothing to check yet (replace "
                                 "`return None` with your expression).", name=label,
                          diagnosis="none")
        result = compare(out, expected, ctx)
        if not result.ok:
            if i:
                result.message = (f"Right on {cases[0][0]}, but not on {where}: "
                                  f"{result.message[:1].lower()}{result.message[1:]} (Is a "
                                  f"size, or an array of {cases[0][0]}, built into it?)")
            return result
    others = " and on ".join(where for where, _ in cases[1:])
    return Result(True, f"Correct on {cases[0][0]}" + (f" and on {others}" if others else "")
                  + f": {right}", name=label)
