"""The tree of known operations evaluated on the learner's arrays, with the whiteboard's
meaning: a 1-D array is a column in a matrix product (``uᵀ v`` a number, ``u vᵀ`` a
matrix) and lines up with the last axis entry by entry, as in NumPy (``x W + b``); an
indexed term is an array whose axes are named by letters; ``I`` takes the size it needs.
Every array a formula makes is held to the size cap (``formula_text.refuse_huge``).
"""

from __future__ import annotations

import numpy as np

from ..formula_text import FUNCTIONS, FormulaError, inner_sizes, refuse_huge
from .notation import Ask


def _softmax_rows(z):
    """softmax along the last axis (each row of a matrix)."""
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# the whiteboard's functions applied entry by entry: the Python form's, by their commands
_ELEMENTWISE = {f"\\{name}": FUNCTIONS[name] for name in (
    "tanh", "exp", "log", "sin", "cos", "sinh", "cosh", "sign")}
_ELEMENTWISE.update({"\\ln": np.log, "\\sigma": FUNCTIONS["sigmoid"],
                     "\\relu": lambda z: np.maximum(z, 0.0), "\\softmax": _softmax_rows})


class Row:
    """A 1-D array transposed: a row vector (a plain 1-D array is a column)."""

    def __init__(self, values: np.ndarray):
        self.values = values


class Labelled:
    """An array whose axes are named by index letters (index notation)."""

    def __init__(self, values: np.ndarray, labels: str):
        self.values, self.labels = values, labels


class Identity:
    """``scale`` I: the identity matrix, of the size its neighbour needs (or, alone, of
    the size of the gradient)."""

    def __init__(self, scale: float = 1.0):
        self.scale = scale

    def sized(self, n: int) -> np.ndarray:
        return self.scale * np.eye(n)


def _is_scalar(v) -> bool:
    return isinstance(v, int | float) or (isinstance(v, np.ndarray) and v.ndim == 0)


def _shape_of(v) -> str:
    if isinstance(v, Row):
        return f"a row vector of {v.values.shape[0]}"
    if isinstance(v, np.ndarray) and v.ndim == 1:
        return f"a column vector of {v.shape[0]}"
    return f"shape {tuple(np.shape(v))}"


class Evaluation:
    """One evaluation of a read formula on ``arrays`` (names to arrays, sizes to ints)."""

    def __init__(self, arrays: dict):
        self.arrays = arrays

    def value(self, node):  # noqa: C901 - one branch per kind of node
        kind = node[0]
        if kind == "number":
            return node[1]
        if kind == "name":
            value = self.arrays[node[1]]
            return float(value) if isinstance(value, int | np.integer) else np.asarray(value)
        if kind == "identity":
            return Identity()
        if kind == "top":
            raise FormulaError("ᵀ (a transpose) belongs after what it transposes: Wᵀ")
        if kind in ("add", "sub"):
            return self._add(self.value(node[1]), self.value(node[2]), kind == "sub")
        if kind == "negate":
            return self._map(self.value(node[1]), np.negative)
        if kind == "product":
            return self._product(node[1], self.value(node[2]), self.value(node[3]), node[4])
        if kind == "divide":
            return self._product("divide", self.value(node[1]), self.value(node[2]), node[3])
        if kind == "power":
            return self._power(node[1], node[2], node[3])
        if kind == "sqrt":
            return self._map(self.value(node[1]), np.sqrt)
        if kind == "absolute":
            return self._map(self.value(node[1]), np.abs)
        if kind == "bars":
            inside = self.value(node[1])
            if node[1][0] == "name" and isinstance(inside, np.ndarray) and inside.ndim == 2:
                name = node[1][1]
                raise Ask(f"|{name}| of a matrix can mean its determinant or each entry's "
                          f"absolute value: write \\det({name}) for the first, "
                          f"\\operatorname{{abs}}({name}) for the second")
            return self._map(inside, np.abs)
        if kind == "indicator":
            return self._indicator(self.value(node[1]), node[2], self.value(node[3]))
        if kind == "apply":
            return self._apply(node[1], self.value(node[2]), node[3])
        if kind == "minmax":
            both = np.maximum if node[1] == "\\max" else np.minimum
            return self._elementwise(self.value(node[2]), self.value(node[3]), both,
                                     "\\max" if both is np.maximum else "\\min")
        if kind == "indexed":
            return self._indexed(node[1], node[2])
        if kind == "sum":
            return self._sum(node[1], self.value(node[2]))
        raise FormulaError(f"{kind} is not something a formula here can compute")

    # -- pieces ----------------------------------------------------------------------------
    def _indexed(self, name: str, labels: str) -> Labelled:
        values = np.asarray(self.arrays[name])
        if values.ndim != len(labels):
            raise FormulaError(f"{name}_{{{labels}}} has {len(labels)} indices, but {name} has "
                               f"{values.ndim} axes (shape {values.shape})")
        return Labelled(values, labels)

    def _map(self, v, function):
        if isinstance(v, Row):
            return Row(function(v.values))
        if isinstance(v, Labelled):
            return Labelled(function(v.values), v.labels)
        if isinstance(v, Identity):
            return Identity(function(v.scale))
        return function(v)

    def _apply(self, name: str, v, piece: str):
        if name in _ELEMENTWISE:
            with np.errstate(all="ignore"):
                return self._map(v, _ELEMENTWISE[name])
        if name == "\\erf":
            from autograd_core.ops.special import erf
            return self._map(v, erf)
        matrix = v.values if isinstance(v, Row) else v
        if isinstance(matrix, Labelled):
            raise FormulaError(f"`{piece}`: {name[1:]} takes a matrix, not an indexed term")
        if name == "\\diag":
            if np.ndim(matrix) not in (1, 2):
                raise FormulaError(f"`{piece}`: diag takes a vector (giving a matrix) or a "
                                   f"matrix (giving its diagonal), not {_shape_of(v)}")
            refuse_huge((np.shape(matrix)[0],) * 2)
            return np.diag(matrix)
        square = np.ndim(matrix) == 2 and np.shape(matrix)[0] == np.shape(matrix)[1]
        if name == "\\tr":
            if np.ndim(matrix) != 2:
                raise FormulaError(f"`{piece}`: tr takes a matrix, not {_shape_of(v)}")
            return np.trace(matrix)
        if not square:
            raise FormulaError(f"`{piece}`: {name[1:]} takes a square matrix, not "
                               f"{_shape_of(v)}")
        if name == "\\det":
            return np.linalg.det(matrix)
        return _inverse(matrix, piece)

    def _indicator(self, left, compare: str, right):
        test = {">": np.greater, "\\gt": np.greater, "<": np.less, "\\lt": np.less,
                ">=": np.greater_equal, "\\geq": np.greater_equal, "\\ge": np.greater_equal,
                "<=": np.less_equal, "\\leq": np.less_equal, "\\le": np.less_equal}[compare]
        return self._elementwise(left, right, lambda a, b: test(a, b).astype(np.float64),
                                 "a comparison")

    def _elementwise(self, a, b, function, what: str):
        """``function(a, b)`` elementwise: numbers with anything, like with like."""
        if isinstance(a, Labelled) or isinstance(b, Labelled):
            return _labelled_elementwise(a, b, function, what)
        if isinstance(a, Row) and isinstance(b, Row):
            return Row(function(a.values, b.values))
        if isinstance(a, Row) or isinstance(b, Row):
            if _is_scalar(a) or _is_scalar(b):
                row = a if isinstance(a, Row) else b
                other = b if row is a else a
                return Row(function(row.values, other) if row is a
                           else function(other, row.values))
            row, other = (a, b) if isinstance(a, Row) else (b, a)
            if isinstance(other, np.ndarray) and other.ndim >= 2:  # a row against each row
                values = (function(row.values, other) if row is a
                          else function(other, row.values))
                return values
            raise FormulaError(f"{what} between {_shape_of(a)} and {_shape_of(b)}: transpose "
                               "one of them so both are rows or both columns")
        if isinstance(a, Identity) or isinstance(b, Identity):
            a, b = _sized_identity(a, b), _sized_identity(b, a)
        try:
            refuse_huge(np.broadcast_shapes(np.shape(a), np.shape(b)))
            with np.errstate(all="ignore"):
                return function(a, b)
        except ValueError:
            raise FormulaError(f"{what} between {_shape_of(a)} and {_shape_of(b)}, which do not "
                               "line up (sizes are compared from the right, each pair equal or "
                               "1)") from None

    def _add(self, a, b, subtract: bool):
        function = np.subtract if subtract else np.add
        return self._elementwise(a, b, function, "a sum" if not subtract else "a difference")

    def _product(self, operation: str, a, b, piece: str):
        if isinstance(a, Identity) and _is_scalar(b) or isinstance(b, Identity) and \
                _is_scalar(a):
            identity, number = (a, b) if isinstance(a, Identity) else (b, a)
            if operation == "divide" and identity is b:
                raise FormulaError(f"`{piece}` divides by I, which has no inverse entry by entry")
            scale = identity.scale / number if operation == "divide" else identity.scale * number
            return Identity(scale)
        if operation == "divide":
            return self._elementwise(a, b, np.divide, f"`{piece}` (a division)")
        if _is_scalar(a) or _is_scalar(b) or operation == "elementwise":
            return self._elementwise(a, b, np.multiply, f"`{piece}` (an elementwise product)")
        if isinstance(a, Labelled) or isinstance(b, Labelled):
            return _labelled_elementwise(a, b, np.multiply, f"`{piece}`")
        if operation == "dot":
            raise Ask(f"`{piece}`: · between two arrays can mean a matrix product or an "
                      "elementwise one: write them side by side (or @) for the matrix "
                      "product, ⊙ (or *) for the elementwise one")
        if operation == "times":
            raise Ask(f"`{piece}`: × between two arrays is not one product: write them side by "
                      "side for the matrix product, ⊙ for the elementwise one")
        return _matrix_product(a, b, piece)

    def _power(self, base_node, exponent, piece: str):
        if exponent == ("top",):
            return _transpose(self.value(base_node), piece)
        if exponent == ("inverse_top",):
            base = self.value(base_node)
            if not (isinstance(base, np.ndarray) and base.ndim == 2
                    and base.shape[0] == base.shape[1]):
                raise FormulaError(f"`{piece}`: only a square matrix has an inverse, and this "
                                   f"is {_shape_of(base)}")
            return _inverse(base, piece).T
        if base_node == ("number", float(np.e)):
            return self._map(self.value(exponent), np.exp)
        power = self.value(exponent)
        base = self.value(base_node)
        if not _is_scalar(power):
            raise FormulaError(f"`{piece}`: an exponent is a number here")
        if power == -1 and isinstance(base, np.ndarray) and base.ndim >= 1:
            if base.ndim == 2 and base.shape[0] == base.shape[1]:
                return _inverse(base, piece)
            raise FormulaError(f"`{piece}`: only a square matrix has an inverse, and this is "
                               f"{_shape_of(base)}; for 1 over each entry write 1/x (⊘)")
        if base_node[0] == "name" and isinstance(base, np.ndarray) and base.ndim == 2:
            name, k = base_node[1], f"{float(power):g}"
            if float(power).is_integer() and 2 <= power <= 4:
                times = " ".join([name] * int(power))
                entries = " ⊙ ".join([name] * int(power))
                raise Ask(f"`{piece}` of a matrix can mean the matrix product {times} or each "
                          f"entry to the power {k}: write {times} for the first, {entries} "
                          "for the second")
            raise Ask(f"`{piece}` of a matrix can mean a matrix power or each entry to the "
                      f"power {k}; this reader takes neither as written: for each entry, use "
                      f"the Python form, {name}**{k}")
        with np.errstate(all="ignore"):
            return self._map(base, lambda v: np.power(v, power))

    def _sum(self, labels: str, v):
        if not isinstance(v, Labelled):
            raise FormulaError(f"∑_{labels} adds up over indices, so what follows it is written "
                               f"with indices too, as in ∑_n x_{{ni}} g_{{nj}}")
        missing = [label for label in labels if label not in v.labels]
        if missing:
            raise FormulaError(f"∑_{labels} adds up over {missing[0]}, which no term after it "
                               "has as an index")
        keep = "".join(label for label in v.labels if label not in labels)
        return Labelled(np.einsum(f"{v.labels}->{keep}", v.values), keep)


def _inverse(matrix: np.ndarray, piece: str) -> np.ndarray:
    try:
        return np.linalg.inv(matrix)
    except np.linalg.LinAlgError:
        raise FormulaError(f"`{piece}`: the matrix is singular on this draw, so it has no "
                           "inverse") from None


def _transpose(v, piece: str):
    if isinstance(v, Row):
        return v.values
    if isinstance(v, Labelled):
        raise FormulaError(f"`{piece}`: in index notation the indices give the order, so "
                           "nothing is transposed: swap the letters instead")
    if _is_scalar(v) or isinstance(v, Identity):
        return v
    if v.ndim == 1:
        return Row(v)
    return np.swapaxes(v, -1, -2)


def _sized_identity(v, other):
    if not isinstance(v, Identity):
        return v
    if isinstance(other, np.ndarray) and other.ndim == 2 and other.shape[0] == other.shape[1]:
        return v.sized(other.shape[0])
    raise Ask("I has no size here: it takes the size of the square matrix beside it (A + I)")


def _matrix_product(a, b, piece: str):
    """``a b`` on the whiteboard: a matrix product, with 1-D arrays as columns."""
    if isinstance(a, Identity) or isinstance(b, Identity):
        identity, other = (a, b) if isinstance(a, Identity) else (b, a)
        return other * identity.scale if not isinstance(other, Row) else Row(
            other.values * identity.scale)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.ndim == b.ndim == 1:
        raise Ask(f"`{piece}` sets two column vectors side by side: write aᵀ b for a number "
                  "(their dot product), a bᵀ for a matrix (their outer product), or a ⊙ b "
                  "for the elementwise product")
    if isinstance(a, Row) and isinstance(b, Row):
        raise Ask(f"`{piece}` sets two row vectors side by side: transpose one of them")
    left = a.values[None, :] if isinstance(a, Row) else a
    right = b.values[None, :] if isinstance(b, Row) else b
    left = left[:, None] if left.ndim == 1 else left
    right = right[:, None] if right.ndim == 1 else right
    if left.shape[-1] != right.shape[-2] and np.shape(a) == np.shape(b) and not isinstance(
            a, Row):
        raise FormulaError(f"`{piece}` sets two arrays of {_shape_of(a)} side by side, which is "
                           "a matrix product here, and their sizes do not fit one: for the "
                           "product entry by entry write ⊙ (or *) between them")
    if left.shape[-1] != right.shape[-2]:
        raise FormulaError(f"`{piece}` is a matrix product of {_shape_of(a)} and "
                           f"{_shape_of(b)}: the {inner_sizes(left.shape[-1], right.shape[-2])}")
    refuse_huge(left.shape[:-1] + right.shape[-1:])
    out = left @ right
    column, row = isinstance(b, np.ndarray) and b.ndim == 1, isinstance(a, Row)
    if column and row:
        return out[..., 0, 0] if out.ndim == 2 else out.reshape(out.shape[:-2])
    if column:
        return out[..., 0]
    if row:
        return Row(out[..., 0, :]) if out.ndim == 2 else out
    return out


def _labelled_elementwise(a, b, function, what: str):
    """Two indexed terms side by side: each index an axis, shared ones aligned (an einsum
    without a sum); a number with an indexed term."""
    if _is_scalar(a) or _is_scalar(b):
        labelled = a if isinstance(a, Labelled) else b
        other = b if labelled is a else a
        values = (function(labelled.values, other) if labelled is a
                  else function(other, labelled.values))
        return Labelled(values, labelled.labels)
    if not (isinstance(a, Labelled) and isinstance(b, Labelled)):
        raise FormulaError(f"{what} mixes index notation (x_{{ni}}) with matrix notation: "
                           "write the whole formula one way")
    labels = "".join(dict.fromkeys(a.labels + b.labels))  # each index once, in order
    sizes = {}
    for term in (a, b):
        for label, size in zip(term.labels, term.values.shape):
            if sizes.setdefault(label, size) != size:
                raise FormulaError(f"{what}: index {label} runs over {sizes[label]} values in "
                                   f"one term and {size} in another")
    refuse_huge(tuple(sizes[x] for x in labels))
    full = [np.einsum(f"{t.labels}->{''.join(x for x in labels if x in t.labels)}",
                      t.values)
            .reshape([sizes[x] if x in t.labels else 1 for x in labels]) for t in (a, b)]
    return Labelled(function(*full), labels)


def as_answer(value, labels: str, name: str, shape: tuple) -> np.ndarray:
    """The formula's value as an array: a row or column as 1-D, indices in the left side's
    order (an index of the left side that no term on the right has: the value is the same
    all along it, for as many values as ``shape``, the gradient's, says)."""
    if isinstance(value, Identity):
        raise Ask("I alone has no size: write it beside a square matrix (A + I)")
    if isinstance(value, Row):
        return value.values
    if not isinstance(value, Labelled):
        return np.asarray(value, dtype=np.float64)
    free = "".join(dict.fromkeys(value.labels))
    if not labels:
        if len(free) > 1:
            raise Ask(f"the formula leaves the indices {free}: write the left side, "
                      f"∂L/∂{name or 'W'}_{{{free}}} = ..., so their order is known")
        return np.einsum(f"{value.labels}->{free}", value.values)
    extra = [x for x in free if x not in labels]
    if extra:
        raise FormulaError(f"index {extra[0]} is on the right but not on the left: add it up "
                           f"with ∑_{extra[0]}, or put it on the left")
    missing = [x for x in labels if x not in free]
    if missing and len(shape) != len(labels):
        raise FormulaError(f"index {missing[0]} is on the left but in no term on the right, "
                           f"and the left side has {len(labels)} indices where the gradient "
                           f"has {len(shape)} axes")
    values = np.einsum(f"{value.labels}->{free}", value.values)  # each index once
    if not missing:
        return np.einsum(f"{free}->{labels}", values)
    kept = "".join(x for x in labels if x in free)  # in the left side's order
    ordered = np.einsum(f"{free}->{kept}", values)
    expanded = ordered.reshape([ordered.shape[kept.index(x)] if x in free else 1
                                for x in labels])
    refuse_huge(shape)
    try:  # the same value all along each index the right side does not have
        return np.broadcast_to(expanded, shape).copy()
    except ValueError:
        raise FormulaError(f"the indices {labels} run over sizes that do not fit {name}'s "
                           f"shape {shape}") from None

