"""Check a derivation of your own against the engine: ``check_derivation``.

You write a function with the engine (named tensors in, a scalar or a tensor out) and,
for some of its inputs, your derivation of the gradient as a NumPy function of the same
named arrays (and of the upstream gradient ``g`` when the output is not a scalar)::

    def f(x, W):
        return ag.tanh(x @ W).sum()

    check_derivation(f, {"W": lambda x, W: x.T @ (1 - np.tanh(x @ W) ** 2)},
                     shapes={"x": (4, 3), "W": (3, 2)})

The checker compares each formula with the engine's gradient on several random draws,
in float64, on your shapes and on shapes it chooses: every axis that can take a size of
its own gets one (so a square matrix cannot hide a transpose, and a batch of 1 cannot
hide a factor of N), and then every size changes together. A wrong formula gets the
kind of mistake (transpose, sign, a constant or batch factor, a missing upstream
gradient, a broadcast not summed, ...) and the shapes and draw it first failed on; the
engine's values are never printed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

import numpy as np

import autograd_core as ag
from autograd_core.recording.tensor import Tensor
from autograd_core.sweep.engine import backward_steps

from .check import check_gradient
from .formula_text import FormulaError, read_formula, shape_mismatch
from .result import Result
from .whiteboard import Ask

DRAWS = 3  # random draws per set of shapes
_FRESH = (5, 7, 2, 6, 9, 11, 13, 8)  # sizes tried for an axis, none equal to another's


def _shape_words(shapes: Mapping[str, tuple]) -> str:
    return ", ".join(f"{k} {tuple(v)}" for k, v in shapes.items())


def _forward(f: Callable, arrays: Mapping[str, np.ndarray]):
    """Leaf tensors of ``arrays`` and ``f``'s output on them; raises what ``f`` raises,
    and a TypeError when the output is not an engine tensor in the recorded graph."""
    tensors = {k: ag.tensor(v, requires_grad=True) for k, v in arrays.items()}
    out = f(**tensors)
    if not isinstance(out, ag.Tensor):
        raise TypeError(f"f returned {type(out).__name__}, not an engine tensor")
    if out.grad_fn is None:
        raise TypeError("f's output is not connected to its inputs in the engine's graph "
                        "(was it computed with NumPy, or under no_grad?)")
    return tensors, out


def _sweep(tensors: Mapping[str, Tensor], out: Tensor, g: np.ndarray | None):
    """Every input's gradient after the sweep from ``out`` (seeded with ``g`` unless it
    is a scalar), and what each op using an input sent it (its paths, by op name)."""
    paths: dict[str, dict[str, np.ndarray]] = {k: {} for k in tensors}
    names = {id(t): k for k, t in tensors.items()}
    for step in backward_steps(out, None if g is None else ag.tensor(g)):
        for sent in step.sent:
            name = names.get(id(sent.target))
            if name is not None and step.node is not None:
                label = f"the path through {step.node.op.name}"
                while label in paths[name]:
                    label += "'"
                paths[name][label] = np.array(sent.grad, dtype=np.float64)
    grads = {k: (np.zeros(t.shape) if t.grad is None else t.grad.numpy())
             for k, t in tensors.items()}
    return grads, paths


def _runs(f: Callable, shapes: Mapping[str, tuple]) -> bool:
    rng = np.random.default_rng(0)
    try:
        _forward(f, {k: rng.standard_normal(s) for k, s in shapes.items()})
        return True
    except Exception:
        return False


def shape_variants(f: Callable, shapes: Mapping[str, tuple]) -> list[tuple[dict, str]]:
    """The shapes to check on, each with what it reveals: yours; every axis that ``f``
    lets take a size of its own given one; every size changed together; and every axis
    of size 1 made longer together."""
    given = {k: tuple(int(n) for n in s) for k, s in shapes.items()}
    variants = [(given, "your shapes")]
    apart = {k: list(s) for k, s in given.items()}
    for name, shape in given.items():
        for axis in range(len(shape)):
            used = {n for s in apart.values() for n in s}
            for size in (n for n in _FRESH if n not in used):
                trial = {k: tuple(s) for k, s in apart.items()}
                trial[name] = tuple(size if i == axis else n for i, n in enumerate(apart[name]))
                if _runs(f, trial):
                    apart[name][axis] = size
                break  # one fresh size per axis: an axis that must match another stays
    apart_shapes = {k: tuple(s) for k, s in apart.items()}
    if apart_shapes != given:
        variants.append((apart_shapes, "every axis that can have a size of its own given "
                                       "one, so no matrix is square by chance and no axis "
                                       "is 1 unless it must be"))
    sizes = sorted({n for s in apart_shapes.values() for n in s if n > 1})
    fresh = [n for n in (3, 4, 10, 12, 14, 15) if n not in sizes]
    mapping = dict(zip(sizes, fresh))
    resized = {k: tuple(mapping.get(n, n) for n in s) for k, s in apart_shapes.items()}
    if resized != apart_shapes and len(mapping) == len(sizes) and _runs(f, resized):
        variants.append((resized, "every size changed, so a factor tied to one size shows"))
    grown_size = next(n for n in (3, 4, 6, 10) if n not in sizes)
    grown = {k: tuple(grown_size if n == 1 else n for n in s) for k, s in apart_shapes.items()}
    if grown != apart_shapes and _runs(f, grown):
        variants.append((grown, "every axis of size 1 made longer together, so a term that "
                                "vanishes at size 1 shows"))
    return variants


def _takes_g(formula: Callable) -> bool:
    try:
        return "g" in inspect.signature(formula).parameters
    except (TypeError, ValueError):
        return False


def _uses_g(formula: Callable) -> bool:
    return bool(getattr(formula, "uses_g", False)) or _takes_g(formula)


def _call(formula: Callable, arrays: Mapping[str, np.ndarray], g):
    try:
        params = inspect.signature(formula).parameters
        star = any(p.kind is p.VAR_KEYWORD for p in params.values())
        names = [n for n in params if n != "g"] if not star else list(arrays)
    except (TypeError, ValueError):
        names = list(arrays)
    kwargs = {k: arrays[k].copy() if isinstance(arrays[k], np.ndarray) else arrays[k]
              for k in names if k in arrays}
    if g is not None and _uses_g(formula):
        kwargs["g"] = g.copy()
    return formula(**kwargs)


def _problem(sentence: str, name: str = "", code: str = "call") -> Result:
    return Result(False, sentence, name=name, diagnosis=code)


def check_derivation(f: Callable, formulas: Mapping[str, Callable],
                     shapes: Mapping[str, tuple], *, draws: int = DRAWS,
                     seed: int = 0, sizes: Mapping[str, tuple] | None = None) -> Result:
    r"""Check your gradient formulas for the inputs of ``f`` against the engine.

    A formula may also be text: in Python's notation, ``{"W": "x.T @ g"}``, or as on the
    whiteboard, in LaTeX or Unicode (read by
    :func:`~widgets.feedback.formula_text.read_formula`, never ``eval``). The whiteboard's
    spellings (``widgets/feedback/whiteboard.py``):

    * side by side (``x W``, ``2x``) or ``@``: a matrix product (with a number: a product);
      ``⊙``, ``\odot`` or ``*``: entry by entry; ``/``, ``\frac{a}{b}``: division;
    * ``Wᵀ``, ``W^T``, ``W^\top``: transpose (a 1-D array is a column, ``uᵀ`` a row);
      ``X^{-1}``, ``X⁻¹``, ``X^{-T}``: the inverse of a square matrix (transposed);
    * entry by entry: ``\sqrt{x}``, ``|x|``, ``σ``/``\sigma``, ``\tanh``, ``\exp``,
      ``\log``, ``\max(0, x)``, ``\operatorname{erf}`` (``softmax``: along the last axis);
      matrix functions: ``\operatorname{diag}``, ``tr``, ``\det``, ``inv``;
    * ``𝟙[x > 0]`` (``\mathbb{1}[x > 0]``): 1 where true, else 0; ``π``, ``e^{x}``, and
      ``I``, which takes the size it needs;
    * index notation: ``x_{ni} g_{nj}`` with ``Σ_n`` (``\sum_n``) is an einsum, and the
      left side (``∂L/∂W_{ij} =``) gives the order of what is left.

    ``·`` and ``×`` between two arrays, ``X^2`` of a matrix and two column vectors side by
    side have two usual meanings: they get a question, never a guess.

    ``f(**tensors)``: an engine function of named tensors (the names of ``shapes``),
    returning a scalar, or a tensor whose upstream gradient the checker draws and
    passes to your formulas as ``g``. ``formulas``: ``{"W": dW, ...}``, each a NumPy
    function of the named arrays (and ``g``). ``shapes``: ``{"x": (4, 3), ...}``, a
    shape for every input of ``f``. ``sizes``: names a formula may use for a size of an
    input, ``{"N": ("x", 0)}`` (N is the first size of x, on every set of shapes checked).
    Returns a Result naming the first mistake (which input, what kind, on which shapes and
    draw), or saying every formula held.
    """
    if not callable(f):
        return _problem(f"f should be a function of your named tensors; you gave "
                        f"{type(f).__name__}.")
    if not isinstance(shapes, Mapping) or not shapes:
        return _problem("shapes should be a dict giving a shape for each input of f, e.g. "
                        "shapes={'x': (4, 3), 'W': (3, 2)}.")
    bad = [k for k, s in shapes.items() if not (isinstance(s, tuple | list)
                                                and all(_is_size(n) for n in s))]
    if bad:
        return _problem(f"The shape of {bad[0]} should be a tuple of positive sizes, e.g. "
                        f"(4, 3); you gave {shapes[bad[0]]!r}.")
    shapes = {k: tuple(int(n) for n in s) for k, s in shapes.items()}
    if not _is_size(draws):
        return _problem(f"draws is how many random draws each set of shapes is checked on: a "
                        f"whole number of at least 1 (the default is {DRAWS}); you gave "
                        f"{draws!r}.", code="draws")
    if not isinstance(formulas, Mapping) or not formulas:
        return _problem("formulas should be a dict of your derivations, e.g. "
                        "{'W': lambda x, W: ...}.")
    unknown = [k for k in formulas if k not in shapes]
    if unknown:
        return _problem(f"{unknown[0]} has a formula but no shape: every input of f needs a "
                        "shape in shapes=.")
    sizes = dict(sizes or {})
    wrong_size = _size_problem(sizes, shapes)
    if wrong_size is not None:
        return _problem(wrong_size, code="sizes")
    formulas = dict(formulas)
    waiting = [k for k, v in formulas.items()
               if v is None or v is Ellipsis or (isinstance(v, str) and v.strip() in ("", "..."))]
    if waiting:
        return _problem(f"The formula for d{waiting[0]} is still a placeholder: write your "
                        "derivation in its place (as text or a NumPy function), then run the "
                        "check again.", name=f"d{waiting[0]}", code="none")
    for key, text in formulas.items():
        if isinstance(text, str):
            try:
                formulas[key] = read_formula(text, shapes, part=key, sizes=sizes)
            except Ask as error:
                return _problem(f"The formula for d{key}: {error}.", name=f"d{key}",
                                code="ambiguous")
            except FormulaError as error:
                return _problem(f"The formula for d{key}: {error}", name=f"d{key}",
                                code="unreadable")
    not_callable = [k for k, v in formulas.items() if not callable(v)]
    if not_callable:
        return _problem(f"The formula for {not_callable[0]} should be a function of the named "
                        f"arrays; you gave {type(formulas[not_callable[0]]).__name__}.",
                        name=f"d{not_callable[0]}")
    try:
        _, first = _forward(f, {k: np.random.default_rng(seed).standard_normal(s)
                                for k, s in shapes.items()})
    except Exception as exc:
        return _problem(f"f could not run on your shapes ({_shape_words(shapes)}): "
                        f"{type(exc).__name__}: {str(exc)[:200]}", code="f")
    if first.numel() == 1:
        with_g = [k for k, v in formulas.items() if _uses_g(v)]
        if with_g:
            return _problem(f"Your formula for d{with_g[0]} uses the upstream gradient g, but "
                            "f returns a single number: its own gradient is 1, so there is "
                            "no g to multiply by. Leave g out of the formula.",
                            name=f"d{with_g[0]}", code="scalar_upstream")

    variants = shape_variants(f, shapes)
    rng = np.random.default_rng(seed)
    for variant, reveals in variants:
        for draw in range(1, draws + 1):
            arrays = {k: rng.standard_normal(s) for k, s in variant.items()}
            try:
                tensors, out = _forward(f, arrays)
            except Exception as exc:
                return _problem(f"f raised {type(exc).__name__} on shapes "
                                f"{_shape_words(variant)}, draw {draw}: {str(exc)[:160]}. "
                                "Each input is drawn from a standard normal, so f must run "
                                "on any real values of these shapes.", code="f")
            g = None if out.numel() == 1 else rng.standard_normal(tuple(out.shape))
            grads, paths = _sweep(tensors, out, g)
            for name, formula in formulas.items():
                label = f"d{name}"
                named = {**arrays, **{k: variant[of][axis] for k, (of, axis) in sizes.items()}}
                try:
                    answer = _call(formula, named, g)
                except Ask as exc:
                    return _problem(f"Your formula for {label}: {exc}.", name=label,
                                    code="ambiguous")
                except FormulaError as exc:
                    return _problem(f"Your formula for {label}, on shapes "
                                    f"{_shape_words(variant)}: {exc}.", name=label,
                                    code="shapes")
                except Exception as exc:
                    mismatch = (shape_mismatch(exc) if isinstance(exc, ValueError)
                                else None)
                    if mismatch is not None:
                        return _problem(f"Your formula for {label} has {mismatch}, on shapes "
                                        f"{_shape_words(variant)}.", name=label,
                                        code="shapes")
                    return _problem(f"Your formula for {label} raised {type(exc).__name__} "
                                    f"on shapes {_shape_words(variant)}: {str(exc)[:160]}",
                                    name=label, code="raised")
                context = {} if g is None else {"upstream": g}
                if len(paths[name]) >= 2:  # used by several ops: a path left out is named
                    context["paths"] = paths[name]
                result = check_gradient(answer, grads[name], name=label, of=name,
                                        batch_size=_batch_size(variant), **context)
                if not result.ok and g is not None and not _uses_g(formula):
                    result = Result(False, f"Your formula for {label} does not use the "
                                           "upstream gradient g, but f's output is not a "
                                           "scalar: every gradient of it carries g (chain "
                                           "rule: upstream times local).", name=label,
                                    diagnosis="missing_upstream",
                                    hint="Use g in the formula: the chain rule multiplies "
                                         "the upstream gradient by the local derivative.")
                if not result.ok:
                    where = ("on your shapes" if reveals == "your shapes" else
                             f"on shapes {_shape_words(variant)} ({reveals})")
                    return Result(False, f"{result.message} First seen {where}, draw {draw}.",
                                  name=label, diagnosis=result.diagnosis,
                                  hint=result._hint)
    names = ", ".join(f"d{k}" for k in formulas)
    return Result(True, f"Your formulas for {names} match the engine's gradients on {draws} "
                        f"random draws on each of {len(variants)} sets of shapes.",
                  diagnosis="correct")


def _size_problem(sizes: Mapping, shapes: Mapping[str, tuple]) -> str | None:
    """The sentence for a ``sizes`` entry that does not name an axis of an input, or
    None."""
    for name, where in sizes.items():
        if not (isinstance(name, str) and name.isidentifier()) or name in shapes:
            return (f"sizes names a size by a new name (like N), not {name!r}"
                    + (", which is an input" if name in shapes else "") + ".")
        ok = (isinstance(where, tuple | list) and len(where) == 2 and where[0] in shapes
              and isinstance(where[1], int | np.integer) and not isinstance(where[1], bool)
              and -len(shapes[where[0]]) <= where[1] < len(shapes[where[0]]))
        if not ok:
            return (f"sizes gives each name an input and one of its axes, e.g. "
                    f"sizes={{{name!r}: ('x', 0)}} for the first size of x; {name!r} has "
                    f"{where!r}.")
    return None


def _is_size(n) -> bool:
    """A whole number of at least 1 (a NumPy integer too, never a bool)."""
    return isinstance(n, int | np.integer) and not isinstance(n, bool | np.bool_) and n >= 1


def _batch_size(shapes: Mapping[str, tuple]) -> int | None:
    """The leading size of the first input with two or more axes, the likeliest batch
    (for naming a factor of N)."""
    return next((s[0] for s in shapes.values() if len(s) >= 2), None)
