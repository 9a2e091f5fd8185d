"""A derivation as it stands on the whiteboard, read safely.

For example ``"x.T @ (g * (1 - tanh(x @ W)**2))"``.

:func:`read_formula` turns the text into a NumPy function of the named arrays (and of
the upstream gradient ``g``) without ``eval``: the text is parsed with :mod:`ast` and only
arithmetic (``+ - * / ** @``, unary minus), numbers, the named arrays, ``g``, a short
list of NumPy functions (bare or as ``np.``), ``.T``, ``.shape``, ``.size``, a few methods
(``sum``, ``mean``, ``reshape``, ``transpose``) with their keyword arguments, plain
indexing, and a comparison as a 0/1 mask (``(x > 0)``) are allowed. Anything else gets
a sentence that names it.
"""

from __future__ import annotations

import ast
import keyword
import operator
import re
from collections.abc import Callable, Iterable

import numpy as np

FUNCTIONS = {name: getattr(np, name) for name in (
    "tanh", "exp", "log", "sqrt", "sin", "cos", "sinh", "cosh", "abs", "sign", "maximum",
    "minimum", "where", "ones_like", "zeros_like", "outer", "einsum", "square", "sum", "mean",
    "matmul", "dot", "transpose", "diag", "trace", "var", "swapaxes")}
FUNCTIONS["sigmoid"] = lambda z: 1 / (1 + np.exp(-z))
LINALG = {name: getattr(np.linalg, name) for name in ("inv", "det", "solve")}  # np.linalg.inv
METHODS = frozenset({"sum", "mean", "reshape", "transpose", "max", "min", "var", "std", "dot",
                     "trace", "diagonal", "clip", "prod"})
# what says a formula is written as on the whiteboard (LaTeX, Unicode, ^, juxtaposition),
# not in Python: read by widgets/feedback/whiteboard.py
_PYTHON = re.compile(r"\.[A-Za-z_]|\*\*|\bnp\b")  # x.T, x.sum(), x**2, np.tanh
_WHITEBOARD_CALL = re.compile(r"(?<![.\w])(max|min|relu|erf|softmax|det|inv|tr)\s*\(")
_WHITEBOARD = re.compile(r"[\\{}ᵀ⊙∘·×Σ∑σπ∂|$≥≤²³⁻√𝟙^]")
ATTRIBUTES = frozenset({"T", "shape", "size", "ndim"})
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow, ast.MatMult: operator.matmul}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_COMPARE = {ast.Gt: operator.gt, ast.Lt: operator.lt, ast.GtE: operator.ge,
            ast.LtE: operator.le}


MAX_ELEMENTS = 10_000_000  # the largest array a formula may make (80 MB of float64)


class FormulaError(ValueError):
    """The text is not a formula this reader accepts; the message says why."""


class Unparsed(FormulaError):
    """The text could not be parsed at all (a syntax error), so the other reader, Python's
    or the whiteboard's, may get further with it."""


def inner_sizes(left: int, right: int) -> str:
    """The end of a sentence about a matrix product whose factors do not fit."""
    return f"inner sizes {left} and {right} differ (a transpose is often what is missing)"


def shape_mismatch(error: ValueError, left=None, right=None, matmul: bool | None = None
                   ) -> str | None:
    """NumPy's ValueError for arrays that do not line up, as a sentence in the learner's
    terms ("a matrix product (@) of shapes (4, 3) and (4, 2): the inner sizes 3 and 4
    differ"), or None for any other ValueError. The operands, where known, name the
    shapes; else they are read from NumPy's message."""
    text = str(error)
    is_matmul = "gufunc signature (n?,k),(k,m?)" in text if matmul is None else matmul
    broadcast = "could not be broadcast" in text
    if not (is_matmul or broadcast):
        return None
    shapes = (f"shapes {np.shape(left)} and {np.shape(right)}" if left is not None
              and right is not None else "")
    if is_matmul:
        if left is not None and right is not None and np.ndim(left) and np.ndim(right):
            inner = (np.shape(left)[-1], np.shape(right)[-2 if np.ndim(right) > 1 else 0])
        else:
            found = re.search(r"size (\d+) is different from (\d+)", text)
            inner = (found.group(2), found.group(1)) if found else None
        if inner is None:
            return (f"a matrix product (@){' of ' + shapes if shapes else ''} has an operand "
                    "with no axis to multiply along (a scalar): use * for a number.")
        return (f"a matrix product (@){' of ' + shapes if shapes else ''} whose "
                f"{inner_sizes(*inner)}")
    if not shapes:
        found = re.findall(r"\(([\d,]*)\)", text)
        shapes = "shapes " + " and ".join(f"({s.rstrip(',').replace(',', ', ')})"
                                          for s in found[:2]) if found else "arrays"
    return (f"an elementwise operation between {shapes}, which do not line up (sizes are "
            "compared from the right, and each pair must be equal or 1)")


def read_formula(text: str, names: Iterable[str], *, part: str | None = None,
                 sizes: Iterable[str] = ()) -> Callable:
    """A function of the named arrays (keyword arguments, plus ``g`` and the named
    ``sizes``) computing ``text``; raises :class:`FormulaError` with a sentence when the
    text cannot be read. Python's notation (``x.T @ g``, ``np.tanh``) is read here; the
    whiteboard's (LaTeX, ``Wᵀ``, ``⊙``, ``x W`` side by side, ``^``) by
    :func:`~widgets.feedback.whiteboard.read_whiteboard`."""
    if not isinstance(text, str) or len(text) > MAX_LENGTH:
        raise FormulaError(f"a formula is text of at most {MAX_LENGTH} characters")
    names, sizes = list(names), list(sizes)
    from .whiteboard import read_whiteboard
    allowed = set(names) | {"g"} | set(sizes)
    if _PYTHON.search(text):  # x.T, np.tanh, x**2: Python's notation (^ read as **)
        return _read_python(text.replace("^", "**").replace("·", "*").replace("×", "*"),
                            allowed, text)
    if _WHITEBOARD.search(text) or _WHITEBOARD_CALL.search(text):
        return read_whiteboard(text, names, part=part, sizes=sizes)
    try:
        return _read_python(text, allowed, text)
    except FormulaError as python_error:  # 2x, x W, A + I: the whiteboard's notation
        try:
            return read_whiteboard(text, names, part=part, sizes=sizes)
        except FormulaError as whiteboard_error:  # the sentence of the reader that got
            # further: the whiteboard's when it parsed what Python could not
            parsed = not isinstance(whiteboard_error, Unparsed) and not any(
                keyword.iskeyword(word) for word in re.findall(r"[A-Za-z_]+", text))
            raise (whiteboard_error if parsed and isinstance(python_error, Unparsed)
                   else python_error) from None


def _read_python(source: str, allowed: set[str], text: str) -> Callable:
    """The formula in Python's notation (the small language of the module's docstring);
    ``text`` is how the learner wrote it."""
    source = source.strip()
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as error:
        where = f" near column {error.offset}" if error.offset else ""
        raise Unparsed(f"{text!r} is not a formula I can read{where}: check the brackets and "
                       "the operators (+ - * / ** @).") from None
    _vet(tree.body, allowed)

    def formula(**arrays):
        return _evaluate(tree.body, arrays)

    formula.uses_g = "g" in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    formula.text = text
    return formula


MAX_LENGTH = 2000  # a formula longer than this is not a whiteboard's
_SUBSCRIPTS = re.compile(r"[A-Za-z ,]{1,60}(->[A-Za-z ]{0,30})?")


def _vet(node: ast.AST, allowed: set[str]) -> None:
    """Refuse, with a sentence, anything but the small language above."""
    if isinstance(node, ast.Constant):
        if node.value is not None and not isinstance(node.value, int | float):
            raise FormulaError(f"{node.value!r} is not a number; a formula uses numbers, your "
                               "arrays and NumPy functions.")
    elif isinstance(node, ast.Name):
        if node.id not in allowed and node.id not in FUNCTIONS and node.id != "np":
            known = ", ".join(sorted(allowed))
            raise FormulaError(f"The formula uses {node.id!r}, which is none of your inputs or "
                               f"g ({known}) nor a function I know "
                               f"({', '.join(sorted(FUNCTIONS))}).")
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise FormulaError("Only + - * / ** and @ are allowed between terms.")
        _vet(node.left, allowed)
        _vet(node.right, allowed)
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY:
            raise FormulaError("Only a minus (or plus) sign may stand before a term.")
        _vet(node.operand, allowed)
    elif isinstance(node, ast.Attribute):
        if (isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name)
                and node.value.value.id == "np" and node.value.attr == "linalg"):
            if node.attr not in LINALG:
                raise FormulaError(f"np.linalg.{node.attr} is not one of the functions a "
                                   f"formula may use ({', '.join(sorted(LINALG))}).")
        elif isinstance(node.value, ast.Name) and node.value.id == "np":
            if node.attr not in FUNCTIONS:
                raise FormulaError(f"np.{node.attr} is not one of the functions a formula may "
                                   f"use ({', '.join(sorted(FUNCTIONS))}).")
        elif node.attr not in ATTRIBUTES and node.attr not in METHODS:
            raise FormulaError(f".{node.attr} is not allowed; use .T, .shape, .size or one of "
                               f"{', '.join('.' + m + '(...)' for m in sorted(METHODS))}.")
        else:
            _vet(node.value, allowed)
    elif isinstance(node, ast.Call):
        if not (isinstance(node.func, ast.Name | ast.Attribute)):
            raise FormulaError("Only a NumPy function or an array method can be called.")
        if isinstance(node.func, ast.Name) and node.func.id not in FUNCTIONS:
            raise FormulaError(f"{node.func.id}(...) is not a function I know "
                               f"({', '.join(sorted(FUNCTIONS))}).")
        _vet(node.func, allowed)
        arguments = [*node.args, *(k.value for k in node.keywords)]
        einsum = getattr(node.func, "id", getattr(node.func, "attr", "")) == "einsum"
        if (einsum and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and _SUBSCRIPTS.fullmatch(node.args[0].value)):
            arguments = arguments[1:]  # einsum's subscripts, "ij,jk->ik"
        for arg in arguments:
            _vet(arg, allowed)
        if any(k.arg is None for k in node.keywords):
            raise FormulaError("**keywords are not allowed in a formula.")
    elif isinstance(node, ast.Tuple):
        for element in node.elts:
            _vet(element, allowed)
    elif isinstance(node, ast.Subscript):
        _vet(node.value, allowed)
        _vet(node.slice, allowed)
    elif isinstance(node, ast.Slice):
        for part in (node.lower, node.upper, node.step):
            if part is not None:
                _vet(part, allowed)
    elif isinstance(node, ast.Compare):  # a mask: (x > 0) reads as 1 where true, else 0
        if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARE:
            raise FormulaError("A comparison in a formula is one of > < >= <= between two "
                               "terms, e.g. (x > 0) for ReLU's mask.")
        _vet(node.left, allowed)
        _vet(node.comparators[0], allowed)
    else:
        raise FormulaError(f"{type(node).__name__} is not allowed in a formula: use "
                           "arithmetic, your arrays and NumPy functions.")


def refuse_huge(shape, what: str = "the formula") -> None:
    """The sentence, before anything is made, for an array of ``shape`` larger than
    :data:`MAX_ELEMENTS` that ``what`` would make (both readers' size cap)."""
    if float(np.prod([float(n) for n in shape])) > MAX_ELEMENTS:
        raise FormulaError(f"{what} would make an array of shape {tuple(shape)}, more than "
                           f"{MAX_ELEMENTS:,} numbers")


def _guard_product(node: ast.BinOp, left, right) -> None:
    """Refuse, before it runs, an operation whose result would be huge."""
    a, b = np.shape(left), np.shape(right)
    try:
        if isinstance(node.op, ast.MatMult) and len(a) >= 1 and len(b) >= 1:
            batch = np.broadcast_shapes(a[:-2], b[:-2])
            refuse_huge(batch + a[-2:-1] + b[-1:] if len(b) > 1 else batch + a[-2:-1],
                     f"`{ast.unparse(node)}`")
        elif not isinstance(node.op, ast.MatMult):
            refuse_huge(np.broadcast_shapes(a, b), f"`{ast.unparse(node)}`")
    except ValueError:
        return  # shapes that do not line up: the operation itself says so


def _guard_call(fn, args: list) -> None:
    """Refuse, before it runs, a call whose result would be huge (an outer product, a
    diagonal matrix, an einsum's output)."""
    if fn is np.outer and len(args) == 2:
        refuse_huge((np.size(args[0]), np.size(args[1])), "np.outer")
    elif fn is np.diag and args and np.ndim(args[0]) == 1:
        refuse_huge((np.size(args[0]),) * 2, "np.diag")
    elif fn is np.einsum and args and isinstance(args[0], str) and "." not in args[0]:
        inputs, _, output = args[0].replace(" ", "").partition("->")
        sizes = {}
        for letters, operand in zip(inputs.split(","), args[1:]):
            sizes.update(zip(letters, np.shape(operand)))
        if not _:
            output = "".join(sorted(c for c in set(inputs) if inputs.count(c) == 1 and c != ","))
        refuse_huge([sizes.get(c, 1) for c in output], "np.einsum")


def _evaluate(node: ast.AST, arrays: dict):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in arrays:
            return arrays[node.id]
        if node.id == "np" or node.id in FUNCTIONS:
            return FUNCTIONS.get(node.id, np)
        raise FormulaError(f"the formula uses {node.id!r}, which has no value here"
                           + (" (f returns a scalar, so there is no upstream gradient g)"
                              if node.id == "g" else ""))
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, arrays), _evaluate(node.right, arrays)
        if isinstance(node.op, ast.Pow) and isinstance(left, int) and isinstance(right, int):
            left = float(left)  # 9**9**9 overflows as a float at once, never runs for hours
        _guard_product(node, left, right)
        try:
            return _BINARY[type(node.op)](left, right)
        except ValueError as error:
            problem = shape_mismatch(error, left, right, isinstance(node.op, ast.MatMult))
            if problem is None:
                raise
            raise FormulaError(f"`{ast.unparse(node)}` is {problem}") from None
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, arrays))
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Attribute) and node.value.attr == "linalg":
            return LINALG[node.attr]
        if isinstance(node.value, ast.Name) and node.value.id == "np":
            return FUNCTIONS[node.attr]
        return getattr(np.asarray(_evaluate(node.value, arrays)), node.attr)
    if isinstance(node, ast.Call):
        fn = _evaluate(node.func, arrays)
        args = [_evaluate(a, arrays) for a in node.args]
        kwargs = {k.arg: _evaluate(k.value, arrays) for k in node.keywords}
        _guard_call(fn, args)
        return fn(*args, **kwargs)
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e, arrays) for e in node.elts)
    if isinstance(node, ast.Subscript):
        return _evaluate(node.value, arrays)[_evaluate(node.slice, arrays)]
    if isinstance(node, ast.Compare):
        test = _COMPARE[type(node.ops[0])](_evaluate(node.left, arrays),
                                           _evaluate(node.comparators[0], arrays))
        return np.asarray(test, dtype=np.float64)
    if isinstance(node, ast.Slice):
        return slice(*(None if p is None else _evaluate(p, arrays)
                       for p in (node.lower, node.upper, node.step)))
    raise FormulaError(f"{type(node).__name__} is not allowed in a formula.")
