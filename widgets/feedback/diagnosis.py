"""Naming a wrong gradient of the right shape: pure functions, tried in order.

Each diagnoser looks at the learner's answer, the engine's gradient and the
context, and either returns a :class:`Diagnosis` (a sentence the learner
understands plus a hint) or ``None``. The most specific diagnosers come first:
a known mistake the check built on purpose beats a generic "off by a factor".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from . import words
from .context import Context
from .tolerance import close, mismatches


@dataclass(frozen=True)
class Diagnosis:
    """``code`` for tests and widgets, ``sentence`` for the learner, ``hint`` on request."""

    code: str
    sentence: str
    hint: str = ""


Diagnoser = Callable[[np.ndarray, np.ndarray, Context], "Diagnosis | None"]


def _known_mistakes(a, e, ctx: Context):
    for m in ctx.mistakes:
        candidate = np.asarray(m.candidate, dtype=np.float64)
        if candidate.shape == a.shape and close(a, candidate, ctx.tol):
            return Diagnosis(m.code, m.says, m.hint)
    return None


def _all_zero(a, e, ctx: Context):
    if np.all(a == 0) and np.any(e != 0):
        return Diagnosis("zeros", f"{ctx.name} is all zeros, but {ctx.reference} is not: "
                                  "some path from the loss reaches this tensor.",
                         "Follow every use of this tensor from the loss backwards.")
    if np.all(e == 0) and np.any(a != 0):
        return Diagnosis("should_be_zero", f"{ctx.name} does not match {ctx.reference}: ask "
                                           "how much the loss changes, to first order, when "
                                           "this tensor moves a little from where it is.",
                         "Check whether this tensor reaches the loss at all, and whether the "
                         "point is a stationary point.")
    return None


def _batchnorm_naive(a, e, ctx: Context):
    if ctx.naive is not None and close(a, ctx.naive, ctx.tol):
        return Diagnosis(
            "batchnorm_naive",
            f"{ctx.name} is the gradient through x̂ = (x - μ)/σ only, treating the mean μ and "
            "the variance σ² as constants. But μ and σ² are computed from these very inputs, "
            "so each input also moves them: two more paths are missing.",
            "Follow each input into μ and into σ² as well as into x̂: three paths, added.")
    return None


def _paths(a, e, ctx: Context):
    if len(ctx.paths) < 2:
        return None
    labels = list(ctx.paths)
    arrays = [ctx.paths[k] for k in labels]
    for label, p in zip(labels, arrays):
        if p.shape == a.shape and close(a, p, ctx.tol):
            others = words.listing(k for k in labels if k != label)
            return Diagnosis(
                "overwrite",
                f"{ctx.name} equals the contribution of {label} alone; the contribution of "
                f"{others} is lost. When a value feeds several ops, its gradient is the SUM "
                "of what each use sends back: accumulate (+=), do not overwrite (=).",
                "Start the gradient at zero and add every path's contribution to it.")
    if close(a, sum(arrays) / len(arrays), ctx.tol):
        return Diagnosis(
            "averaged_paths",
            f"{ctx.name} is the average of the {len(arrays)} paths' contributions; the "
            "gradient is their sum (each path changes the loss on its own, and the changes "
            "add up).", "Add the contributions; do not divide by the number of paths.")
    for k in range(2, len(arrays)):
        for subset in combinations(range(len(arrays)), k):
            if close(a, sum(arrays[i] for i in subset), ctx.tol):
                missing = words.listing(labels[i] for i in range(len(labels)) if i not in subset)
                return Diagnosis("overwrite", f"{ctx.name} is missing the contribution of "
                                              f"{missing}.",
                                 "Accumulate every path's contribution.")
    return None


def _transpose(a, e, ctx: Context):
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2] and not close(e, np.swapaxes(e, -1, -2),
                                                                  ctx.tol):
        if close(np.swapaxes(a, -1, -2), e, ctx.tol):
            return Diagnosis(
                "transpose",
                f"{ctx.name} is the transpose of the right answer. The shapes agree only "
                "because the matrix is square, so a shape check cannot catch this one.",
                "Work the same formula on a non-square example: only one order of the "
                "factors gives the tensor's own shape.")
    return None


def _sign(a, e, ctx: Context):
    if close(a, -e, ctx.tol):
        return Diagnosis("sign", f"{ctx.name} has the wrong sign everywhere.",
                         "Look for a subtraction (a - b gives -g to b) or a step taken in the "
                         "wrong direction.")
    return None


def _batch_factor(a, e, ctx: Context):
    n = ctx.batch_size
    if not n or n == 1:
        return None
    if close(a, n * e, ctx.tol):
        return Diagnosis(
            "batch_factor",
            f"{ctx.name} is exactly N = {n} (the batch size) times too large: you summed over "
            "the batch where the loss takes the mean.",
            f"The mean over N examples puts 1/N = 1/{n} on every example's gradient.")
    if close(a, e / n, ctx.tol):
        return Diagnosis(
            "batch_factor",
            f"{ctx.name} is exactly N = {n} (the batch size) times too small: you divided by "
            "N where the loss sums over the batch (or divided by N twice).",
            "A sum over the batch has no 1/N; check where the 1/N of the mean appears.")
    return None


def _upstream(a, e, ctx: Context):
    u = ctx.upstream
    if u is None or np.all(u == 1):
        return None
    try:
        times = a * u
    except ValueError:
        return None
    if times.shape == e.shape and close(times, e, ctx.tol):
        return Diagnosis(
            "missing_upstream",
            f"{ctx.name} is missing the upstream gradient: you gave the local derivative "
            "only.",
            "Chain rule: gradient = upstream gradient × local derivative; the upstream "
            "gradient is what the later ops send back (dL/d output).")
    return None


def _activation(a, e, ctx: Context):
    fp = ctx.activation_derivative
    if fp is None:
        return None
    base = ctx.before_activation
    if base is None:
        with np.errstate(divide="ignore", invalid="ignore"):
            base = np.where(fp != 0, e / np.where(fp != 0, fp, 1), 0.0)
        known = fp != 0
    else:
        known = np.ones(a.shape, dtype=bool)
    if close(a * fp, e, ctx.tol) and (ctx.before_activation is None or close(a, base, ctx.tol)):
        return Diagnosis(
            "missing_activation_derivative",
            f"{ctx.name} is missing the activation's derivative f'(z): the gradient was not "
            "taken back through the activation.",
            "Going back through h = f(z) multiplies the gradient by f'(z), evaluated at this "
            "layer's pre-activation z.")
    for label, other in ctx.wrong_derivatives.items():
        if other.shape != a.shape or not known.any():
            continue
        if close(a[known], (base * other)[known], ctx.tol):
            return Diagnosis(
                "wrong_activation_derivative",
                f"{ctx.name} uses the wrong activation derivative: {label}.",
                "The derivative belongs to the layer you are going back through: f'(z) at "
                "that layer's own pre-activation.")
    return None


def _truncated(a, e, ctx: Context):
    if not ctx.answer_is_integer or a.size == 1:  # a typed "1" is not a truncation
        return None
    if close(a, np.trunc(e), ctx.tol) or close(a, np.round(e), ctx.tol):
        return Diagnosis("integer", f"{ctx.name} looks like the right answer with its "
                                    "fractions cut off.",
                         "Integer arrays drop fractions: build arrays from floats (1.0, not 1) "
                         "and avoid // for division.")
    return None


def _scale(a, e, ctx: Context):
    denom = float(np.sum(e * e))
    if denom == 0:
        return None
    c = float(np.sum(a * e)) / denom
    if c == 0 or abs(c - 1) < 1e-3 or not close(a, c * e, ctx.tol):
        return None
    # Any single number is some multiple of another, and naming the factor of a single
    # number gives its answer away: say nothing about a factor there.
    if a.size == 1:
        return None
    way = "the right way" if c > 0 else "the opposite way"
    size = words.factor(max(abs(c), 1 / abs(c)))
    if size == "2":
        how = "2 times too large" if abs(c) > 1 else "2 times too small"
        return Diagnosis("scale", f"{ctx.name} points {way} but is {how}. A 2 often comes "
                                  "from differentiating a square (d/dx x² = 2x) or a ½ in the "
                                  "loss.", "Track the constant factors of your formula one at "
                                           "a time.")
    return Diagnosis("scale", f"{ctx.name} points {way}, with every entry off by the same "
                              f"constant factor (too {'large' if abs(c) > 1 else 'small'}): "
                              "a constant of your formula is wrong or missing.",
                     "Track the constant factors of your formula one at a time: the mean's "
                     "1/N, a ½ in the loss, a 2 from a square.")


DIAGNOSERS: tuple[Diagnoser, ...] = (
    _known_mistakes, _all_zero, _batchnorm_naive, _paths, _transpose, _sign, _batch_factor,
    _upstream, _activation, _truncated, _scale,
)


def _undo_steps(a, e, ctx: Context):
    """(phrase, code, a with that one mistake undone) for the mistakes that combine with
    others: a transpose, the batch factor, the sign."""
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2]:
        yield "it is transposed", "transpose", np.swapaxes(a, -1, -2)
    n = ctx.batch_size
    if n and n > 1:
        yield (f"it is N = {n} times too large (a sum where the loss averages)", "batch_factor",
               a / n)
        yield f"it is N = {n} times too small", "batch_factor", a * n
    yield "its sign is flipped", "sign", -a


def _first(a, e, ctx: Context):
    for diagnoser in DIAGNOSERS:
        found = diagnoser(a, e, ctx)
        if found is not None:
            return found
    return None


def _two_mistakes(a, e, ctx: Context):
    for phrase, code, undone in _undo_steps(a, e, ctx):
        found = _first(undone, e, ctx)
        if found is not None and found.code not in (code, "scale"):
            rest = found.sentence.replace(ctx.name, "it", 1)
            if rest[:1].isupper() and (rest[1:2].islower() or rest[1:2] == " "):
                rest = rest[0].lower() + rest[1:]  # "Your dW2 ..." inside a sentence
            return Diagnosis(f"{code}+{found.code}",
                             f"{ctx.name} has two mistakes: {phrase}; and, with that undone, "
                             f"{rest}", found.hint)
    return None


def diagnose_values(a: np.ndarray, e: np.ndarray, ctx: Context) -> Diagnosis:
    """The first diagnosis that explains ``a`` (same shape as ``e``), or where they differ.

    Single mistakes are tried first, then a transpose / batch factor / sign combined with
    one other mistake."""
    finite = np.all(np.isfinite(a)) and np.all(np.isfinite(e))
    if finite:
        found = _first(a, e, ctx) or _two_mistakes(a, e, ctx)
        if found is not None:
            return found
    return _where_they_differ(a, e, ctx)


def _where_they_differ(a, e, ctx: Context) -> Diagnosis:
    """Where the answer differs, and how much, without the engine's values: the index (or
    the count), whether it is close (a small term missing) and which way it is off."""
    bad = mismatches(a, e, ctx.tol)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.abs(a - e) / np.maximum(np.abs(e), np.max(np.abs(e[np.isfinite(e)]),
                                                            initial=0.0) or 1.0)
    rel = np.where(np.isnan(rel), np.inf, rel)
    near = bool(np.all(rel[bad] < 1e-2)) if bad.any() else False
    closeness = (" It is close (within 1%) but not within rounding error: a small term is "
                 "missing or different (an ε, a constant, a rounded input)." if near else "")
    hint = "Compare one entry by hand, following each path from the loss to this entry."
    if a.ndim == 0 or a.size == 1:
        return Diagnosis("values",
                         f"{ctx.name} does not match {ctx.reference}.{closeness}",
                         "Recompute step by step and compare each intermediate.")
    worst = np.unravel_index(int(np.argmax(np.where(bad, rel, -1.0))), a.shape)
    direction = "too large" if a[worst] > e[worst] else "too small"
    if not np.isfinite(a[worst]) or not np.isfinite(e[worst]):
        direction = "different"
    n_bad = int(bad.sum())
    if n_bad == 1:
        where = f"only index {words.index(worst)} is wrong (yours is {direction} there)."
    else:
        where = (f"the largest difference is at index {words.index(worst)} (yours is "
                 f"{direction} there).")
    return Diagnosis("values", f"{ctx.name} differs from {ctx.reference} in {n_bad} of "
                               f"{a.size} entries: {where}{closeness}", hint)
