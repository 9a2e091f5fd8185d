"""Every op's ``rule`` text says what its ``backward`` computes.

An op's ``rule`` is the formula a learner reads beside the stepper. It is text kept
next to the code, so this test keeps the two from drifting apart: for EVERY op class
in ``autograd_core.ops`` it runs the rule as a small NumPy program (the convention is
in ``autograd_core/recording/node.py``'s docstring) on random inputs, and compares each
gradient the rule defines with the one the op's ``backward`` returns. A new op needs
a row in :data:`EXAMPLES`, or the coverage test fails.

Some rules call a whole operation by name (``padded``, ``gather``, conv2d's adjoints, the
pools' backward ops, einsum's gradient plan) or sum over several axes at once (batch
norm): those are also held to a reference written here independently of the rule,
element by element or in closed form (:data:`WRITTEN_OUT`).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

import autograd_core as ag
import autograd_core.ops
from autograd_core.ops import activations as act
from autograd_core.ops import conv, indexing, joining, matmul, nn_ops, normalization, pooling
from autograd_core.ops import einsum as es
from autograd_core.ops import elementwise as ew
from autograd_core.ops import layer_norm as ln
from autograd_core.ops import linalg as la
from autograd_core.ops import masking as mk
from autograd_core.ops import reductions as red
from autograd_core.ops import scatter as sc
from autograd_core.ops import shape as sh
from autograd_core.ops import softmax as sm
from autograd_core.ops import sorting as so
from autograd_core.ops.special import erf
from autograd_core.recording.node import _UNRECORDED, Function
from autograd_core.recording.rule import PLAIN, rule_program
from autograd_core.sweep.engine import sum_to
from widgets.live import input_names


def all_ops() -> list[type[Function]]:
    """Every public op class defined in the modules of ``autograd_core.ops``."""
    ops = []
    for info in pkgutil.iter_modules(autograd_core.ops.__path__):
        module = importlib.import_module(f"autograd_core.ops.{info.name}")
        ops += [obj for name, obj in vars(module).items()
                if isinstance(obj, type) and issubclass(obj, Function)
                and obj.__module__ == module.__name__ and not name.startswith("_")]
    return ops


# -- reading a rule as NumPy: the engine's own reading (recording/rule.py) --------------
RULE_FUNCTIONS = {name: getattr(np, name) for name in dir(np) if not name.startswith("_")}
RULE_FUNCTIONS.update({name: value for name, value in vars(PLAIN).items()
                       if not name.startswith("_")})  # sum, mean (axes kept), sigmoid, rows
RULE_FUNCTIONS.update(erf=erf)  # not NumPy's: gelu's rule reads Φ through erf


def run_rule(rule: str, names: dict) -> dict:
    """Execute the rule with these names bound; the names it defines (and the rest)."""
    scope = {**RULE_FUNCTIONS, **names}
    exec(rule_program(rule), scope)
    return scope


# -- the table of inputs ----------------------------------------------------------------
@dataclass(frozen=True)
class Example:
    """Positional inputs (float arrays become leaves that require grad) and params."""

    inputs: tuple
    params: dict = field(default_factory=dict)


def real(rng, *shape):
    return rng.standard_normal(shape)


def positive(rng, *shape):
    return rng.uniform(0.5, 2.0, shape)


def small_ints(rng, *shape):
    """Values in {-2, ..., 2}: ties and zeros (kinks) come up often, on purpose."""
    return rng.integers(-2, 3, shape).astype(np.float64)


def invertible(rng, *batch_and_side):
    """Matrices (..., n, n) well away from singular: X + 2n·I, X standard normal."""
    *batch, side = batch_and_side
    return real(rng, *batch, side, side) + 2 * side * np.eye(side)


def unary(values):
    return lambda rng: [Example((values(rng, 3, 4),))]


def broadcast_pair(first, second):
    return lambda rng: [Example((first(rng, 2, 3, 4), second(rng, 3, 1))),
                        Example((first(rng, 3, 4), second(rng, 4)))]


REDUCTION_PARAMS = [dict(axis=(0, 2), keepdims=False), dict(axis=None, keepdims=False),
                    dict(axis=(1,), keepdims=True)]
LOSS_REDUCTIONS = ["mean", "sum", "none"]
POOLING_PARAMS = [dict(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)),
                  dict(kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))]  # overlapping


def reduction(values, extra=({},)):
    return lambda rng: [Example((values(rng, 3, 4, 2),), {**p, **e})
                        for p in REDUCTION_PARAMS for e in extra]


def along_dim(**extra):
    return lambda rng: [Example((real(rng, 3, 4),), {"dim": d, **extra}) for d in (0, 1)]


def loss(second):
    return lambda rng: [Example((real(rng, 4, 3), second(rng)), {"reduction": r})
                        for r in LOSS_REDUCTIONS]


def batch_norm_training(rng):
    x = real(rng, 4, 3, 2, 2)
    mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    return [Example((x, real(rng, 3), real(rng, 3)), dict(mean=mean, var=var, eps=1e-5))]


def norm_rows(rng, affine: int, eps: float):
    """layer_norm / rms_norm over the last one and the last two dims, with ``affine``
    leaves (weight, bias) of those dims."""
    examples = []
    for shape, axes in (((4, 3), (-1,)), ((2, 3, 4), (-2, -1))):
        trailing = shape[len(shape) - len(axes):]
        leaves = (real(rng, *shape), *(real(rng, *trailing) for _ in range(affine)))
        examples.append(Example(leaves, dict(axes=axes, eps=eps)))
    return examples


def batch_norm_eval(rng):
    x = real(rng, 4, 3, 2, 2)
    stats = dict(mean=real(rng, 3, 1, 1), var=positive(rng, 3, 1, 1), eps=1e-5)
    return [Example((x, real(rng, 3), real(rng, 3)), stats)]


EXAMPLES: dict[type[Function], Callable] = {
    ew.Add: broadcast_pair(real, real),
    ew.Sub: broadcast_pair(real, real),
    ew.Mul: broadcast_pair(real, real),
    ew.Div: broadcast_pair(real, positive),
    ew.Pow: broadcast_pair(positive, real),
    ew.Maximum: broadcast_pair(small_ints, small_ints),
    ew.Minimum: broadcast_pair(small_ints, small_ints),
    ew.Neg: unary(real),
    ew.Exp: unary(real),
    ew.Log: unary(positive),
    ew.Sqrt: unary(positive),
    ew.Abs: unary(small_ints),
    ew.Sin: unary(real),
    ew.Cos: unary(real),
    ew.Tanh: unary(real),
    ew.Sigmoid: unary(real),
    ew.Relu: unary(small_ints),
    ew.Where: lambda rng: [Example((rng.random((3, 4)) > 0.5, real(rng, 3, 4), real(rng, 4)))],
    ew.Clip: lambda rng: [Example((small_ints(rng, 3, 4) / 2,), dict(low=-0.5, high=0.5))],
    ew.Cast: lambda rng: [Example((real(rng, 3).astype(np.float32),),
                                  dict(dtype=np.dtype(np.float64)))],
    ew.Clone: lambda rng: [Example((real(rng, 3),), dict(dtype=np.dtype(np.float64)))],
    matmul.MatMul: lambda rng: [Example((real(rng, 3, 4), real(rng, 4, 2)))],
    la.Det: lambda rng: [Example((invertible(rng, 3),)), Example((invertible(rng, 2, 3),))],
    la.LogAbsDet: lambda rng: [Example((invertible(rng, 3),)),
                               Example((invertible(rng, 2, 3),))],
    la.Inv: lambda rng: [Example((invertible(rng, 3),)), Example((invertible(rng, 2, 3),))],
    la.Solve: lambda rng: [Example((invertible(rng, 3), real(rng, 3, 2))),
                           Example((invertible(rng, 2, 3), real(rng, 3, 1)))],
    la.Trace: lambda rng: [Example((real(rng, 3, 3),)), Example((real(rng, 2, 4),))],
    sh.Reshape: lambda rng: [Example((real(rng, 2, 6),), dict(shape=(3, 4)))],
    sh.Permute: lambda rng: [Example((real(rng, 2, 3, 4),), dict(axes=(2, 0, 1)))],
    sh.Expand: lambda rng: [Example((real(rng, 3, 1),), dict(shape=(2, 3, 4)))],
    indexing.GetItem: lambda rng: [
        Example((real(rng, 5, 3),), dict(key=key))
        for key in (np.array([0, 2, 0, 4]), (slice(1, 4), 2),
                    (np.array([1, 1, 3]), np.array([0, 2, 0])))],
    indexing.IndexBackward: lambda rng: [
        Example((real(rng, 4, 3),), dict(key=np.array([0, 2, 0, 4]), shape=(5, 3))),
        Example((real(rng, 3),), dict(key=(slice(1, 4), 2), shape=(5, 3)))],
    indexing.Narrow: lambda rng: [Example((real(rng, 5, 3),), dict(key=key))
                                  for key in ((slice(1, 4),), (slice(None), slice(1, 3)))],
    joining.Cat: lambda rng: [Example((real(rng, 2, 3), real(rng, 2, 1), real(rng, 2, 2)),
                                      dict(dim=1))],
    joining.Stack: lambda rng: [Example((real(rng, 2, 3), real(rng, 2, 3)), dict(dim=d))
                                for d in (0, 2)],
    red.Sum: reduction(real),
    red.Mean: reduction(real),
    red.Max: reduction(small_ints),
    red.Min: reduction(small_ints),
    red.Amax: reduction(small_ints),
    red.Amin: reduction(small_ints),
    es.Einsum: lambda rng: [Example(tuple(real(rng, *s) for s in shapes), dict(equation=e))
                            for e, shapes in EINSUM_EQUATIONS],
    red.Var: reduction(real, extra=({"correction": 1}, {"correction": 0})),
    sm.Softmax: along_dim(),
    sm.LogSoftmax: along_dim(),
    sm.LogSumExp: lambda rng: [e for k in (False, True) for e in along_dim(keepdims=k)(rng)],
    nn_ops.Linear: lambda rng: [Example((real(rng, 5, 3), real(rng, 2, 3), real(rng, 2)))],
    nn_ops.Dropout: lambda rng: [Example((real(rng, 4, 3),),
                                         dict(p=0.3, generator=ag.Generator(0)))],
    nn_ops.Embedding: lambda rng: [Example((np.array([[0, 2], [0, 0]]), real(rng, 3, 4)))],
    nn_ops.NLLLoss: loss(lambda rng: rng.integers(0, 3, 4)),
    nn_ops.SmoothedNLLLoss: lambda rng: [  # ignored targets off 'mean' (whose g here is g / N)
        Example((real(rng, 4, 3), np.array(t)), dict(reduction=r, ignore_index=i,
                                                     label_smoothing=e))
        for t, r, i, e in (([0, 2, 1, 1], "mean", -100, 0.1), ([2, 0, 0, 1], "mean", -100, 1.0),
                           ([0, -100, 1, -100], "sum", -100, 0.0),
                           ([0, -100, 1, 2], "none", -100, 0.2), ([0, 1, 1, 2], "sum", 1, 0.3))],
    nn_ops.MSELoss: loss(lambda rng: real(rng, 4, 3)),
    nn_ops.BCEWithLogits: loss(lambda rng: rng.random((4, 3))),
    conv.Conv2d: lambda rng: [
        Example((real(rng, 2, 3, 5, 5), real(rng, 4, 3, 3, 3), real(rng, 4)),
                dict(stride=(1, 1), padding=p, dilation=(1, 1), groups=1))
        for p in ((0, 0), (1, 1))],
    pooling.MaxPool2d: lambda rng: [Example((small_ints(rng, 2, 3, 5, 5),), p)
                                    for p in POOLING_PARAMS],
    pooling.AvgPool2d: lambda rng: [Example((real(rng, 2, 3, 5, 5),), p)
                                    for p in POOLING_PARAMS],
    normalization.BatchNorm: batch_norm_training,
    normalization.BatchNormEval: batch_norm_eval,
    ln.LayerNorm: lambda rng: norm_rows(rng, affine=2, eps=1e-5),
    ln.RMSNorm: lambda rng: norm_rows(rng, affine=1, eps=1e-6),
    mk.MaskedFill: lambda rng: [Example((real(rng, 3, 4), rng.random(shape) > 0.5,
                                         np.asarray(real(rng))))  # a 0-d value leaf
                                for shape in ((3, 4), (4,), (2, 3, 4))],
    mk.Tril: lambda rng: [Example((real(rng, 2, 3, 4),), dict(diagonal=d)) for d in (0, 1, -2)],
    mk.Triu: lambda rng: [Example((real(rng, 2, 3, 4),), dict(diagonal=d)) for d in (0, 1, -2)],
    mk.Cumsum: along_dim(),
    mk.Flip: lambda rng: [Example((real(rng, 2, 3, 4),), dict(dims=d))
                          for d in ((0,), (2, 0), ())],
    mk.Pad: lambda rng: [Example((real(rng, 2, 3, 4),), dict(pad=p, value=0.5))
                         for p in ((1, 2), (-1, 2, 0, -2), (1, 1, -1, 0, 2, -1))],
    sc.Gather: lambda rng: [Example((real(rng, 3, 4), rng.integers(0, 4, (3, 5))), dict(dim=1)),
                            Example((real(rng, 3, 4), rng.integers(0, 3, (2, 4))), dict(dim=0)),
                            Example((real(rng, 3, 4), rng.integers(0, 4, (2, 2))), dict(dim=1))],
    sc.ScatterAdd: lambda rng: [
        Example((real(rng, 3, 4), rng.integers(0, 4, (3, 5)), real(rng, 3, 5)), dict(dim=1)),
        Example((real(rng, 3, 4), rng.integers(0, 3, (2, 4)), real(rng, 3, 4)), dict(dim=0)),
        Example((real(rng, 3, 4), rng.integers(0, 4, (2, 2)), real(rng, 3, 3)), dict(dim=1))],
    # sort and topk: gathers at the indices the values sort by (ops/sorting.py)
    so.Sort: lambda rng: [Example((a, np.argsort(a, axis=1, kind="stable")), dict(dim=1))
                          for a in (real(rng, 3, 4),)],
    so.Topk: lambda rng: [Example((a, np.argsort(-a, axis=0, kind="stable")[:2]), dict(dim=0))
                          for a in (real(rng, 3, 4),)],
    so.Roll: lambda rng: [Example((real(rng, 3, 4),), dict(shifts=s, dims=d))
                          for s, d in (((1, -2), (0, 1)), ((5,), (1,)), (-3, None))],
    ew.Contiguous: lambda rng: [Example((real(rng, 3, 4).T,), dict(dtype=np.dtype(np.float64)))],
    act.Gelu: unary(real),
    act.GeluTanh: unary(real),
    act.Silu: unary(real),
    act.Softplus: lambda rng: [Example((real(rng, 3, 4),), dict(beta=b, threshold=t))
                               for b, t in ((1.0, 20.0), (2.0, 0.5), (-1.0, 0.0))],
    act.LeakyRelu: lambda rng: [Example((small_ints(rng, 3, 4),), dict(negative_slope=s))
                                for s in (0.01, 0.2, -0.5)],
    act.NormalCdf: unary(real),
}


# -- running an op's own backward ---------------------------------------------------------
@dataclass
class Run:
    """One recorded application of an op and what its backward returned."""

    inputs: tuple
    out: np.ndarray
    g: np.ndarray
    saved: dict
    params: dict
    grads: tuple


def run_backward(op, example: Example, rng) -> Run:
    leaves = [ag.Tensor(a, requires_grad=True) if a.dtype.kind == "f" else a
              for a in example.inputs]
    out = op.apply(*leaves, **example.params)
    node = out.grad_fn
    g = rng.standard_normal(out.shape)  # non-uniform, so a misplaced element shows
    saved = {name: s.array for name, s in node.saved.items()}
    grads = op.backward(node, g)
    return Run(example.inputs, out._data, g, saved, node.params, tuple(grads))


def as_input_grad(value, shape: tuple) -> np.ndarray:
    """A gradient as the engine hands it on: summed down to the input's shape."""
    value = np.asarray(value, dtype=np.float64)
    return sum_to(np.broadcast_to(value, np.broadcast_shapes(value.shape, shape)), shape)


def assert_same_gradients(op, run: Run, rule_grads: list) -> None:
    for i, (expected, got) in enumerate(zip(run.grads, rule_grads)):
        if expected is None:  # an input that gets no gradient (indices, a mask)
            continue
        assert got is not None, f"{op.name}: backward gives input {i} a gradient, the rule none"
        shape = np.shape(run.inputs[i])
        np.testing.assert_allclose(as_input_grad(got, shape), as_input_grad(expected, shape),
                                   rtol=1e-10, atol=1e-12,
                                   err_msg=f"{op.name}: input {i}, rule {op.rule!r}")


def _seeds():
    return [np.random.default_rng(seed) for seed in range(3)]


# -- the rules that are NumPy programs ----------------------------------------------------
def rule_names(op, run: Run) -> dict:
    """What a rule may read: inputs by name, ``out``, ``g``, params and saved arrays."""
    g, out = run.g, run.out
    if "keepdims" in run.params:  # a reduction: g and out keep the reduced axes
        axis = run.params.get("axis", run.params.get("dim"))
        kept = np.sum(np.zeros(np.shape(run.inputs[0])), axis=axis, keepdims=True).shape
        g, out = g.reshape(kept), out.reshape(kept)
    if "reduction" in run.params and getattr(op, "rule_gradient", None) is not None:
        # a loss whose rule reads g as each element's share (nll_loss's rule shares it)
        elementwise = op.forward(_UNRECORDED, *run.inputs,
                                 **{**run.params, "reduction": "none"}).shape
        n = int(np.prod(elementwise)) if run.params["reduction"] == "mean" else 1
        g = np.broadcast_to(g / n, elementwise)
    names = dict(zip(input_names(op, len(run.inputs)), run.inputs))
    return {**names, **run.params, "out": out, **run.saved, "g": g}


def gradients_by_rule(op, run: Run) -> list:
    """Each input's gradient as the rule computes it (``None`` if it names none)."""
    names = rule_names(op, run)
    if any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(op.forward).parameters.values()):
        # a_i, da_i: the rule is run once per input i
        shapes = [np.shape(a) for a in run.inputs]
        return [run_rule(op.rule, {**names, "i": i, "a_i": a, "shapes": shapes,
                                   "others": [b for k, b in enumerate(run.inputs) if k != i]}
                         ).get("da_i") for i, a in enumerate(run.inputs)]
    scope = run_rule(op.rule, names)
    return [scope.get(f"d{name}") for name in input_names(op, len(run.inputs))]


def _cat_reference(run: Run) -> list:
    # da_i = g[the rows of a_i along dim]
    dim, start, grads = run.params["dim"], 0, []
    for a in run.inputs:
        rows = range(start, start + a.shape[dim])
        grads.append(np.take(run.g, rows, axis=dim))
        start += a.shape[dim]
    return grads


def _conv2d_reference(run: Run) -> list:
    x, weight, _ = run.inputs
    g, (ph, pw) = run.g, run.params["padding"]
    n, c, h, w = x.shape
    _, _, kh, kw = weight.shape
    # dinput: the full convolution of g with the kernel rotated 180° (stride 1)
    g_full = np.pad(g, ((0, 0), (0, 0), (kh - 1, kh - 1), (kw - 1, kw - 1)))
    rotated = weight[:, :, ::-1, ::-1]
    d_padded = np.zeros((n, c, h + 2 * ph, w + 2 * pw))
    for i in range(kh):
        for j in range(kw):
            patch = g_full[:, :, i:i + h + 2 * ph, j:j + w + 2 * pw]
            d_padded += np.einsum("nohw,oc->nchw", patch, rotated[:, :, i, j])
    dinput = d_padded[:, :, ph:ph + h, pw:pw + w]
    # dweight: the correlation of the input with g; dbias: Σ g over batch and pixels
    x_padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = g.shape[-2:]
    dweight = np.zeros_like(weight)
    for i in range(kh):
        for j in range(kw):
            dweight[:, :, i, j] = np.einsum("nohw,nchw->oc", g,
                                            x_padded[:, :, i:i + oh, j:j + ow])
    return [dinput, dweight, g.sum(axis=(0, 2, 3))]


def _pool_reference(send: Callable) -> Callable:
    """dinput = fold(what each window sends back): loop over the windows, add up."""
    def reference(run: Run) -> list:
        (x,), g, p = run.inputs, run.g, run.params
        (kh, kw), (sh_, sw), (ph, pw) = p["kernel_size"], p["stride"], p["padding"]
        padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=-np.inf)
        d_padded = np.zeros_like(padded)
        for n, c, oy, ox in np.ndindex(g.shape):
            rows, cols = slice(oy * sh_, oy * sh_ + kh), slice(ox * sw, ox * sw + kw)
            d_padded[n, c, rows, cols] += send(padded[n, c, rows, cols], g[n, c, oy, ox])
        return [d_padded[:, :, ph:ph + x.shape[2], pw:pw + x.shape[3]]]
    return reference


def _to_first_maximum(window, g):
    sent = np.zeros(window.shape)
    sent.flat[np.argmax(window)] = g  # argmax: the first maximum in row-major order
    return sent


def _batch_norm_reference(training: bool) -> Callable:
    def reference(run: Run) -> list:
        (x, weight, _), g, p = run.inputs, run.g, run.params
        def Σ(t):  # noqa: N802 - the rule's notation: over batch and pixels
            return t.sum(axis=(0, 2, 3), keepdims=True)
        m = x.size // x.shape[1]
        inv_std = 1 / np.sqrt(p["var"] + p["eps"])
        x_hat = (x - p["mean"]) * inv_std
        w = weight.reshape(1, -1, 1, 1)
        if training:
            dx = w * inv_std / m * (m * g - Σ(g) - x_hat * Σ(g * x_hat))
        else:
            dx = g * w * inv_std
        return [dx, Σ(g * x_hat).ravel(), Σ(g).ravel()]
    return reference


def _scatter_add_loops(out: np.ndarray, dim: int, index: np.ndarray, values) -> np.ndarray:
    """out[pos, with index[pos] on dim] += values[pos], for every position of the index."""
    for pos in np.ndindex(index.shape):
        target = list(pos)
        target[dim] = index[pos]
        out[tuple(target)] += values[pos]
    return out


def _gather_loops(x: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    """out[pos] = x[pos, with index[pos] on dim], for every position of the index."""
    out = np.zeros(index.shape)
    for pos in np.ndindex(index.shape):
        source = list(pos)
        source[dim] = index[pos]
        out[pos] = x[tuple(source)]
    return out


def _gather_reference(run: Run) -> list:
    # da = scatter_add(zeros_like(a), dim, index, g)
    a, index = run.inputs
    return [_scatter_add_loops(np.zeros_like(a), run.params["dim"], index, run.g), None]


def _scatter_add_reference(run: Run) -> list:
    # da = g;  dsrc = gather(g, dim, index), 0 for the entries of src outside the index
    _, index, src = run.inputs
    dsrc = np.zeros_like(src)
    dsrc[tuple(slice(0, n) for n in index.shape)] = _gather_loops(run.g, run.params["dim"],
                                                                  index)
    return [run.g, None, dsrc]


def _pad_reference(run: Run) -> list:
    # da = pad(g, [-p for p in pad]): a[pos] went to out[pos + before]; if that is
    # outside out (a cropped element), its gradient is 0
    (a,), g, pad = run.inputs, run.g, run.params["pad"]
    before = [0] * a.ndim
    for i in range(len(pad) // 2):
        before[a.ndim - 1 - i] = pad[2 * i]
    da = np.zeros_like(a)
    for pos in np.ndindex(a.shape):
        landed = tuple(p + b for p, b in zip(pos, before))
        if all(0 <= k < n for k, n in zip(landed, g.shape)):
            da[pos] = g[landed]
    return [da]


# einsum's examples: canonical equations (as ops/api.py's einsum passes them), with a
# size-1 dim that broadcasts, diagonals and an index summed inside one operand
EINSUM_EQUATIONS = [
    ("ij,jk->ik", [(3, 4), (4, 2)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ii->", [(3, 3)]), ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]),
    ("Aij,jk->Aik", [(2, 3, 4), (4, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,jk->ik", [(3, 1), (4, 2)]), ("iij,i->j", [(3, 3, 2), (1,)])]


def _einsum_reference(run: Run) -> list:
    # da_i = einsum(...): out is linear in a_i, so da_i[idx] = sum(g * the einsum with a_i
    # replaced by the one-hot array of idx), for every idx
    grads = []
    for i, a in enumerate(run.inputs):
        da = np.zeros(a.shape)
        for idx in np.ndindex(a.shape):
            one_hot = np.zeros(a.shape)
            one_hot[idx] = 1.0
            operands = [one_hot if k == i else x for k, x in enumerate(run.inputs)]
            da[idx] = np.sum(run.g * np.einsum(run.params["equation"], *operands))
        grads.append(da)
    return grads


# linear algebra, entry by entry: the cofactor C_ij = (-1)^(i+j) det(A without row i and
# column j) is how det(A) changes with A_ij (Laplace's expansion along row i); and A⁻¹
# changes with A_ij as -A⁻¹ E_ij A⁻¹ (E_ij: 1 at (i, j), else 0), so X = A⁻¹B as
# -A⁻¹ E_ij X, and with B_ij as A⁻¹ E_ij
def _cofactors(a: np.ndarray) -> np.ndarray:
    c = np.zeros_like(a)
    for *batch, i, j in np.ndindex(a.shape):
        minor = np.delete(np.delete(a[tuple(batch)], i, axis=0), j, axis=1)
        c[(*batch, i, j)] = (-1) ** (i + j) * np.linalg.det(minor)
    return c


def _det_reference(run: Run) -> list:
    return [run.g[..., None, None] * _cofactors(run.inputs[0])]


def _logabsdet_reference(run: Run) -> list:
    a = run.inputs[0]
    return [run.g[..., None, None] * _cofactors(a) / np.linalg.det(a)[..., None, None]]


def _one_hot(shape: tuple, i: int, j: int) -> np.ndarray:
    e = np.zeros(shape)
    e[..., i, j] = 1.0
    return e


def _inverse_reference(run: Run) -> list:
    a = run.inputs[0]
    inverse, da = np.linalg.inv(a), np.zeros_like(a)
    for i, j in np.ndindex(a.shape[-2:]):
        change = -inverse @ _one_hot(a.shape, i, j) @ inverse
        da[..., i, j] = np.sum(run.g * change, axis=(-2, -1))
    return [da]


def _solve_reference(run: Run) -> list:
    a, b = run.inputs
    inverse, x = np.linalg.inv(a), np.linalg.solve(a, b)
    da, db = np.zeros_like(a), np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
                                        + b.shape[-2:])
    for i, j in np.ndindex(a.shape[-2:]):
        da[..., i, j] = np.sum(run.g * (-inverse @ _one_hot(a.shape, i, j) @ x), axis=(-2, -1))
    for i, j in np.ndindex(b.shape[-2:]):
        db[..., i, j] = np.sum(run.g * (inverse @ _one_hot(b.shape, i, j)), axis=(-2, -1))
    return [da, db.sum(axis=tuple(range(db.ndim - b.ndim)))]  # over batches b was broadcast to


# -- the tests -------------------------------------------------------------------------------
# Ops that only ever appear on the graph of a recorded backward (create_graph), whose
# rules name the op they are adjoint to: their values and derivatives are checked
# against central differences of the lean backward, to the third order, in
# tests/engine/test_create_graph_cnn.py, not here.
RECORDED_ONLY = {conv.Conv2dInputGrad, conv.Conv2dWeightGrad, pooling.MaxPool2dBackward,
                 pooling.MaxPool2dGather, pooling.AvgPool2dBackward}


def test_every_op_has_its_rule_checked():
    ops = set(all_ops())
    assert len(ops) > 30  # the discovery found the op library
    missing = sorted(op.__name__ for op in ops - set(EXAMPLES) - RECORDED_ONLY)
    assert not missing, f"ops whose rule text nothing checks (add them to EXAMPLES): {missing}"
    assert set(WRITTEN_OUT) <= set(EXAMPLES)


@pytest.mark.parametrize("op", list(EXAMPLES), ids=[op.name for op in EXAMPLES])
def test_the_rule_run_as_numpy_gives_what_backward_gives(op):
    for rng in _seeds():
        for example in EXAMPLES[op](rng):
            run = run_backward(op, example, rng)
            assert_same_gradients(op, run, gradients_by_rule(op, run))


# Rules that run as code but call a whole operation by name (padded, gather, scatter_add,
# conv2d's adjoints, the pools' backward ops, einsum's gradient plan, narrow, inv,
# solve) or sum over
# several axes at once (batch norm): each is also held to a reference written
# independently of it (element by element, or in closed form).
WRITTEN_OUT = {mk.Pad: _pad_reference, sc.Gather: _gather_reference,
               so.Sort: _gather_reference, so.Topk: _gather_reference,
               sc.ScatterAdd: _scatter_add_reference,
               normalization.BatchNorm: _batch_norm_reference(training=True),
               normalization.BatchNormEval: _batch_norm_reference(training=False),
               conv.Conv2d: _conv2d_reference, joining.Cat: _cat_reference,
               es.Einsum: _einsum_reference,
               la.Det: _det_reference, la.LogAbsDet: _logabsdet_reference,
               la.Inv: _inverse_reference, la.Solve: _solve_reference,
               pooling.MaxPool2d: _pool_reference(_to_first_maximum),
               pooling.AvgPool2d: _pool_reference(
                   lambda window, g: np.full(window.shape, g / window.size))}


@pytest.mark.parametrize("op", list(WRITTEN_OUT), ids=[op.name for op in WRITTEN_OUT])
def test_a_rule_that_names_an_operation_matches_its_reference_written_out(op):
    for rng in _seeds():
        for example in EXAMPLES[op](rng):
            run = run_backward(op, example, rng)
            assert_same_gradients(op, run, WRITTEN_OUT[op](run))


def test_notes_are_not_run_and_code_is():
    assert rule_program("da = g   (the engine casts it back)") == "da = g"
    assert rule_program("da = zeros_like(a);  add.at(da, key, g)") == \
        "da = zeros_like(a);  add.at(da, key, g)"
    scope = run_rule("da = g * sum(b, axis)   (a note)", {"g": 2.0, "b": np.ones((2, 3)),
                                                          "axis": 1})
    assert scope["da"].shape == (2, 1)  # sum keeps the summed axis


def test_a_wrong_rule_is_caught():
    """The check can fail: a rule beside a hand-written backward (relu's), with the mask
    left out, disagrees with that backward."""
    class WrongRelu(ew.Relu):
        rule = "da = g"

    rng = np.random.default_rng(0)
    run = run_backward(WrongRelu, EXAMPLES[ew.Relu](rng)[0], rng)
    with pytest.raises(AssertionError, match="relu: input 0"):
        assert_same_gradients(WrongRelu, run, gradients_by_rule(WrongRelu, run))
