"""Short text for arrays and byte counts, as the graph and the panels show them.

Small arrays are written out in full; large ones are summarised by shape and a
few statistics, so a label stays one line whatever the tensor's size.

A number that is zero up to rounding shows as 0. Which of a value's last bits come out
depends on the machine (NumPy and OpenBLAS pick their SIMD kernels when they start), so
the mean of a normalised tensor reads -1.3e-08 on one CPU and -1.6e-08 on another. Only
a sum can cancel to noise (a product or a function of one number keeps its relative
precision), so a number is measured against the terms that were added to make it: below
:func:`noise_floor`, a few units in the last place of their size, every machine shows 0,
and a learner's screen matches a classmate's. The mean a summary prints adds up the
tensor's entries; an op's output or a gradient was added up from its inputs' terms
(``scale``, see :class:`ValueScales` and :func:`sent_scale`).

>>> summarize(np.array([1.0, -2.0]))
'[ 1. -2.]'
>>> summarize(np.arange(100.0))
'(100,) min 0 max 99 mean 49.5 norm 573'
>>> summarize(np.array([0.1, 0.2, -0.3] * 4))  # its mean, 1.4e-17, is rounding noise
'(12,) min -0.3 max 0.2 mean 0 norm 0.7483'
>>> format_bytes(1536)
'1.5 KiB'
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

from autograd_core.tools.graph import Graph, TensorInfo

FULL_MAX = 8  # arrays with at most this many elements are written out in full
# How many units in the last place of its scale a number may be and still be rounding
# noise: an op rounds once (half a unit), a chain of ops and a reduction's changed
# summation order add a few more.
NOISE_ULPS = 16


def noise_floor(dtype, scale: float) -> float:
    """The size below which a number computed from magnitudes up to ``scale`` in ``dtype``
    is rounding noise (``NOISE_ULPS`` units in the last place of ``scale``); 0 for a dtype
    that does not round (integers, bool).

    >>> noise_floor(np.float64, 1.0)  # 16 units of float64's 2.2e-16
    3.552713678800501e-15
    """
    dtype = np.dtype(dtype)
    if dtype.kind not in "fc" or not np.isfinite(scale):
        return 0.0
    return NOISE_ULPS * float(np.finfo(dtype).eps) * float(scale)


def magnitude(array) -> float:
    """The largest finite ``|value|`` of ``array`` (0 if it has none)."""
    a = np.asarray(array)
    if a.dtype.kind not in "fciub" or a.size == 0:
        return 0.0
    a = np.abs(a[np.isfinite(a)] if a.dtype.kind in "fc" else a)
    return float(a.max()) if a.size else 0.0


def summarize(array, full_max: int = FULL_MAX, precision: int = 4,
              scale: float = 0.0) -> str:
    """One line describing ``array``: its values if small, else shape/min/max/mean/norm.

    Entries at or below the :func:`noise_floor` of ``scale`` (the size of the terms that
    were added to make them; 0: nothing was added) show as 0, and so does a mean below
    the floor of the entries it adds up."""
    if array is None:
        return "None"
    a = _without_noise(_tidy(np.asarray(array)), scale)
    if a.size <= full_max:
        if a.ndim == 0:
            return _number(a.item(), precision)
        text = np.array2string(_rounded(a, precision), precision=precision, suppress_small=True,
                               separator=" ", max_line_width=10_000)
        return " ".join(text.split())
    if a.dtype == bool:
        return f"{_shape(a.shape)} {int(a.sum())} of {a.size} True"
    finite = a[np.isfinite(a)] if a.dtype.kind == "f" else a
    if finite.size == 0:
        return f"{_shape(a.shape)} no finite values"
    f = finite.astype(np.float64)
    mean = f.mean()
    if abs(mean) <= noise_floor(a.dtype, magnitude(f)):  # the entries it adds cancelled
        mean = 0.0
    numbers = {"min": f.min(), "max": f.max(), "mean": mean, "norm": np.linalg.norm(f)}
    stats = " ".join([_shape(a.shape)] + [f"{name} {_number(x, precision)}"
                                          for name, x in numbers.items()])
    if finite.size < a.size:
        stats += f" ({a.size - finite.size} non-finite)"
    return stats


# Bounds on the size of an op's output from its inputs', for an output the program dropped
# (an op's value is otherwise read, never guessed): a product's is the product of its
# inputs' sizes, a sum's their sum. Other ops' dropped outputs count as unknown (0).
_OUTPUT_BOUND = {"mul": np.prod, "add": np.sum, "sub": np.sum, "neg": np.sum}


class ValueScales:
    """The scale of the terms each value of a recorded graph was added up from, for
    :func:`summarize`. An op whose output has fewer entries than its largest input (a
    sum, a mean, a contraction) adds ``terms`` = that ratio of products of its inputs'
    entries at each output entry: its scale is ``terms`` times the product of its
    inputs' sizes. ``loss`` summed from 8 terms near 3 that cancel reads -1.3e-15 on one
    machine and 2.2e-16 on another; at that scale both are noise and show as 0. An op
    that adds nothing up has scale 0: ``sigmoid(-40)``'s 4.2e-18 is real.

    ``values`` maps tensor ids to arrays; an input whose values the program dropped
    counts at the bound ``_OUTPUT_BOUND`` gives from its own op's inputs, or as unknown.
    """

    def __init__(self, graph: Graph, values: Mapping[str, object]):
        self._graph, self._values = graph, values
        self._op_scale: dict[str, float] | None = None  # worked out when first asked
        self._producer: dict[str, str] = {}  # tensor id -> the op that made it

    def of_op(self, op_id: str) -> float:
        """The scale of the terms op ``op_id`` added up at each output entry (0: none)."""
        return self._scales().get(op_id, 0.0)

    def of_tensor(self, tensor_id: str) -> float:
        """The scale of the tensor ``tensor_id``: that of the op that made it (0 for a leaf)."""
        self._scales()
        producer = self._producer.get(tensor_id)
        return self.of_op(producer) if producer is not None else 0.0

    def _scales(self) -> dict[str, float]:
        if self._op_scale is None:
            tensors = {t.id: t for t in self._graph.tensors}
            size: dict[str, float] = {}  # tensor id -> its magnitude (or a bound, or 0)

            def size_of(tensor_id: str) -> float:
                if tensor_id not in size:
                    value = self._values.get(tensor_id)
                    size[tensor_id] = 0.0 if value is None else magnitude(value)
                return size[tensor_id]

            self._op_scale, self._producer = {}, {}
            for op in self._graph.ops:  # execution order: inputs before the ops that read them
                sizes = [size_of(t) for t in op.inputs]
                entries = [int(np.prod(tensors[t].shape)) for t in op.inputs]
                out_entries = int(np.prod(tensors[op.output].shape))
                terms = max(entries, default=0) / max(out_entries, 1)
                self._op_scale[op.id] = terms * float(np.prod(sizes)) if terms > 1 else 0.0
                self._producer[op.output] = op.id
                if self._values.get(op.output) is None:
                    bound = _OUTPUT_BOUND.get(op.op)
                    size[op.output] = float(bound(sizes)) if bound and sizes else 0.0
        return self._op_scale


def sent_scale(upstream, sent) -> float:
    """The scale of the terms a gradient a step sent was added up from, for
    :func:`summarize`: a rule that sums (a bias's gradient over the batch, an
    un-broadcast) adds ``upstream.size / sent.size`` entries of the upstream gradient at
    each entry it sends, and what cancels leaves noise at that scale (a convolution's
    bias before a batch norm gets 1e-16 here and 3e-17 there). A rule that sends as many
    entries as it received adds nothing up (scale 0): a saturated sigmoid's 4e-18 * g is
    real.

    >>> sent_scale(np.ones((64, 16)), np.zeros(16))  # 64 terms of size 1 were added
    64.0
    """
    upstream, sent = np.asarray(upstream), np.asarray(sent)
    terms = upstream.size / max(sent.size, 1)
    return magnitude(upstream) * terms if terms > 1 else 0.0


def full(array, precision: int = 4, max_elements: int = 64, scale: float = 0.0) -> str:
    """The values as a NumPy-style block (several lines for a matrix), or a summary
    when there are more than ``max_elements`` (``scale`` as for :func:`summarize`)."""
    a = _tidy(np.asarray(array))
    if a.size > max_elements:
        return summarize(a, scale=scale)
    a = _rounded(_without_noise(a, scale), precision)
    squeezed = a.squeeze()
    if a.ndim >= 3 and squeezed.ndim < a.ndim:  # (1, 16, 1, 1): one line, not sixteen
        return (f"{_shape(a.shape)}, shown without its size-1 axes:\n"
                + np.array2string(squeezed, precision=precision, suppress_small=True,
                                  max_line_width=72))
    return np.array2string(a, precision=precision, suppress_small=True, max_line_width=72)


def for_later(array, max_elements: int = 64, scale: float = 0.0):
    """What ``full(array)`` needs, kept cheaply for later: a copy of a small array
    (formatting it is what costs, so it waits until shown), or the summary text of
    a large one (so the array itself can be freed; ``scale`` as for :func:`summarize`)."""
    a = np.asarray(array)
    return np.array(a) if a.size <= max_elements else summarize(a, scale=scale)


def later_text(kept) -> str:
    """``full`` of what ``for_later`` kept."""
    return kept if isinstance(kept, str) else full(kept)


class Texts(Mapping):
    """key -> ``full`` text of an array, formatted when first read (values are what
    ``for_later`` keeps, or text)."""

    def __init__(self, kept: dict):
        self._kept = kept
        self._text: dict = {}

    def __getitem__(self, key) -> str:
        if key not in self._text:
            self._text[key] = later_text(self._kept[key])
        return self._text[key]

    def __iter__(self) -> Iterator:
        return iter(self._kept)

    def __len__(self) -> int:
        return len(self._kept)


def _without_noise(a: np.ndarray, scale: float) -> np.ndarray:
    """``a`` with every entry at or below the noise floor of ``scale`` set to 0."""
    floor = noise_floor(a.dtype, scale)
    if not floor or a.size == 0:
        return a
    return np.where(np.abs(a) <= floor, 0, a).astype(a.dtype)


def _tidy(a: np.ndarray) -> np.ndarray:
    """Show -0.0 (e.g. relu's zeros, computed as x * 0) as 0."""
    return a + 0.0 if a.dtype.kind == "f" else a


def _rounded(a: np.ndarray, precision: int) -> np.ndarray:
    """``a`` rounded to the decimals it is printed with, so that a value too small to show
    (-1e-17 from rounding) prints as ``0.``, never ``-0.``, which a learner reads as a bug."""
    return np.round(a, precision) + 0.0 if a.dtype.kind == "f" else a


def format_bytes(n: int) -> str:
    """Bytes in a readable unit: 16 B, 1.5 KiB, 3.0 MiB."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def describe_tensor(t: TensorInfo, dtype: bool = False) -> str:
    """A graph tensor (``autograd_core.tools.graph.TensorInfo``) in a few words: ``t5 'h'
    (2, 1)`` (id, name if any, shape, and with ``dtype=True`` its dtype), or
    ``t2 constant 2.0`` for a number the program wrote."""
    if t.label is not None:
        return f"{t.id} constant {t.label}"
    name = f" '{t.name}'" if t.name else ""
    return f"{t.id}{name} {shape_text(t.shape)}" + (f" {t.dtype}" if dtype else "")


def shape_text(shape) -> str:
    """A shape the way Python prints a tuple: (), (3,), (2, 3)."""
    return _shape(tuple(shape))


def _shape(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _number(x, precision: int) -> str:
    if isinstance(x, bool | np.bool_):
        return str(bool(x))
    return f"{float(x):.{precision}g}"
