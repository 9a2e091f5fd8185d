"""The op table every engine test draws on: :data:`CASES`, one row per core op.

Each row has a name, a *program* that builds the output from its inputs and an *input
domain* (a strategy drawing shapes, values and parameters inside the op's valid domain
and off its kinks). Programs are written against a library namespace ``lib``: the
engine's tests run them with ``lib`` standing for ``autograd_core``
(engine/test_op_gradients.py), the PyTorch cross-checks with ``lib`` standing for
PyTorch (engine/test_torch_crosscheck.py), and forward mode, the invariants and the
lessons' experiments reuse the same rows. Below the table: running a row on the engine,
drawing a non-uniform upstream gradient, and the central-difference reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from attention_strategies import attention_inputs
from class_loss_strategies import class_targets
from einsum_strategies import einsum_equations, einsum_operands, reduce_dims
from hypothesis import strategies as st
from linalg_strategies import matrices, solve_operands, square_matrices
from masking_strategies import causal_scores, flips, gathers, masked, pads, triangles
from strategies import (
    CLIP_BOUNDS,
    Layout,
    arrays,
    axes,
    basic_index_keys,
    broadcastable_shapes,
    dims,
    distinct_arrays,
    expand_targets,
    integer_array_keys,
    mask_keys,
    matmul_shapes,
    reshape_targets,
    shapes,
    upstream_gradients,
)

import autograd_core as ag

CONTIGUOUS = Layout("contiguous")


# -- the table ------------------------------------------------------------------------
@dataclass(frozen=True)
class Example:
    """One drawn input: ``inputs`` become leaves with ``requires_grad=True``;
    ``params`` are keyword arguments of the program (dims, keys, NumPy constants)."""

    inputs: tuple
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """A row of the table: ``program(lib, *leaves, **params)`` returns a tensor (or a
    tuple of tensors); ``examples`` draws its inputs; ``torch_skip`` says why PyTorch
    cannot run the program, when it cannot."""

    name: str
    program: Callable
    examples: st.SearchStrategy
    torch_skip: str | None = None

    def __repr__(self) -> str:
        return self.name


def _pair(draw, shapes_, domains) -> tuple:
    """Arrays of these shapes; "distinct" ones are distinct across all of them."""
    if "distinct" in domains:
        return draw(distinct_arrays(*shapes_))
    return tuple(draw(arrays(s, d)) for s, d in zip(shapes_, domains, strict=True))


@st.composite
def unary(draw, domain="real", min_dims=0, max_dims=4):
    shape = draw(shapes(min_dims, max_dims))
    return Example((draw(arrays(shape, domain)),))


@st.composite
def binary(draw, domain_a="real", domain_b="real"):
    """Two leaves whose shapes broadcast together."""
    return Example(_pair(draw, draw(broadcastable_shapes()), (domain_a, domain_b)))


@st.composite
def with_constant(draw, domain_x="real", domain_c="real"):
    """One leaf and one NumPy array constant ``c`` that broadcast together."""
    x, c = _pair(draw, draw(broadcastable_shapes()), (domain_x, domain_c))
    return Example((x,), {"c": c})


@st.composite
def matmul_operands(draw, constant=None):
    """Operands of ``a @ b``; with ``constant="a"`` or ``"b"`` that one is a NumPy array."""
    a, b = (draw(arrays(s)) for s in draw(matmul_shapes()))
    if constant == "a":
        return Example((b,), {"c": a})
    if constant == "b":
        return Example((a,), {"c": b})
    return Example((a, b))


@st.composite
def conditional(draw, scalar_b=False):
    """``where``: a boolean condition and two leaves, all three broadcasting."""
    cond_shape, sa, sb = draw(broadcastable_shapes(3))
    cond = np.asarray(draw(arrays(cond_shape)) > 0)
    if scalar_b:
        return Example((draw(arrays(sa)),), {"cond": cond})
    return Example((draw(arrays(sa)), draw(arrays(sb))), {"cond": cond})


def _reduced_count(shape, dim) -> int:
    if dim is None:
        return int(np.prod(shape))
    picked = (dim,) if isinstance(dim, int) else dim
    return int(np.prod([shape[d] for d in picked])) if shape else 1


@st.composite
def reduction(draw, domain="real", with_correction=False):
    """An input, the dims to reduce (int, tuple or None) and keepdim."""
    shape = draw(shapes())
    params = {"dim": draw(axes(len(shape))), "keepdim": draw(st.booleans())}
    if with_correction:  # n - correction must stay positive
        n = _reduced_count(shape, params["dim"])
        params["correction"] = draw(st.sampled_from([0, 1] if n > 1 else [0]))
    return Example((draw(arrays(shape, domain)),), params)


@st.composite
def along_dim(draw, min_dims=0, keepdim=False):
    """An input and one dim (softmax family)."""
    shape = draw(shapes(min_dims))
    params = {"dim": draw(dims(len(shape)))}
    if keepdim:
        params["keepdim"] = draw(st.booleans())
    return Example((draw(arrays(shape)),), params)


@st.composite
def sorting(draw, topk=False):
    """An input of distinct values (ties: test_sorting.py), a dim and a direction; for
    topk a k from 0 to the dim's size (1 for a 0-d input)."""
    shape = draw(shapes())
    dim = draw(dims(len(shape)))
    params = {"dim": dim, "flag": draw(st.booleans())}
    if topk:
        # (k=0 of a 0-d input: PyTorch gives a 0-d result its own backward refuses)
        params["k"] = draw(st.integers(0, shape[dim]) if shape else st.just(1))
    return Example(draw(distinct_arrays(shape)), params)


@st.composite
def rolled(draw, with_dims=True):
    """An input and shifts (any sign, past the size too), one per dim named, or one
    shift and no dims (the flattened input)."""
    shape = draw(shapes(min_dims=1 if with_dims else 0))
    shift = st.integers(-7, 7)
    if not with_dims:
        return Example((draw(arrays(shape)),), {"shifts": draw(shift), "dims": None})
    n = len(shape)
    picked = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    dims_ = tuple(draw(st.sampled_from([d, d - n])) for d in picked)
    shifts = tuple(draw(shift) for _ in dims_)
    if len(dims_) == 1 and draw(st.booleans()):
        shifts, dims_ = shifts[0], dims_[0]  # roll(x, 2, 1): ints, not tuples
    return Example((draw(arrays(shape)),), {"shifts": shifts, "dims": dims_})


@st.composite
def reshaped(draw):
    shape = draw(shapes())
    return Example((draw(arrays(shape)),), {"shape": draw(reshape_targets(shape))})


@st.composite
def flattened(draw):
    shape = draw(shapes())
    start, end = sorted(draw(st.lists(dims(len(shape)), min_size=2, max_size=2)),
                        key=lambda d: d % max(len(shape), 1))
    return Example((draw(arrays(shape)),), {"start": start, "end": end})


@st.composite
def two_dims(draw):
    shape = draw(shapes(min_dims=1))
    d0, d1 = draw(dims(len(shape))), draw(dims(len(shape)))
    return Example((draw(arrays(shape)),), {"d0": d0, "d1": d1})


@st.composite
def permuted(draw):
    shape = draw(shapes())
    order = tuple(draw(st.permutations(range(len(shape)))))
    return Example((draw(arrays(shape)),), {"order": order})


@st.composite
def squeezed(draw):
    shape = draw(shapes())
    return Example((draw(arrays(shape)),), {"dim": draw(st.none() | dims(len(shape)))})


@st.composite
def unsqueezed(draw):
    shape = draw(shapes(max_dims=3))
    dim = draw(st.integers(-len(shape) - 1, len(shape)))
    return Example((draw(arrays(shape)),), {"dim": dim})


@st.composite
def expanded(draw):
    shape = draw(shapes(max_dims=3))
    return Example((draw(arrays(shape)),), {"sizes": draw(expand_targets(shape))})


@st.composite
def indexed(draw, keys):
    shape = draw(shapes(min_dims=1))
    return Example((draw(arrays(shape)),), {"key": draw(keys(shape))})


@st.composite
def joined(draw, stacking=False, constant=False):
    """1-3 inputs that agree outside ``dim`` (for ``stack``: agree everywhere)."""
    shape = draw(shapes(min_dims=0 if stacking else 1, max_dims=3))
    n = draw(st.integers(1, 3))
    ndim = len(shape) + (1 if stacking else 0)
    dim = draw(st.integers(-ndim, ndim - 1))
    pieces = []
    for _ in range(n + (1 if constant else 0)):
        piece = list(shape)
        if not stacking:
            piece[dim] = draw(st.integers(1, 3))
        pieces.append(draw(arrays(tuple(piece))))
    if constant:
        return Example(tuple(pieces[:-1]), {"dim": dim, "c": pieces[-1]})
    return Example(tuple(pieces), {"dim": dim})


@st.composite
def splitting(draw, sections=False):
    shape = draw(shapes(min_dims=1))
    dim = draw(dims(len(shape)))
    side = shape[dim]
    if sections:
        cuts = sorted(draw(st.lists(st.integers(0, side), max_size=2)))
        sizes = list(np.diff([0, *cuts, side]))
        how = [int(s) for s in sizes]
    else:
        how = draw(st.integers(1, side))
    return Example((draw(arrays(shape)),), {"how": how, "dim": dim})


@st.composite
def normalized(draw, affine=0, domain="distinct", eps=False):
    """layer_norm / rms_norm: an input whose last 1-3 dims (``shape``, PyTorch's
    normalized_shape) are normalised, ``affine`` leaves of those dims (weight, bias),
    and with ``eps`` an eps. "distinct" values keep every row's spread >= 0.01, so
    that float32 and finite differences stay accurate; rms_norm's rows are nonzero."""
    shape = draw(shapes(min_dims=1))
    trailing = shape[len(shape) - draw(st.integers(1, min(len(shape), 3))):]
    if domain == "distinct":
        x, *extra = draw(distinct_arrays(shape, *[trailing] * affine))
    else:
        x, extra = draw(arrays(shape, domain)), [draw(arrays(trailing)) for _ in range(affine)]
    params = {"shape": trailing}
    if eps:
        params["eps"] = draw(st.sampled_from([1e-5, 0.1]))
    return Example((x, *extra), params)


def _drawn(pairs: st.SearchStrategy) -> st.SearchStrategy:
    """Examples from a strategy of (inputs, params) pairs (masking_strategies.py)."""
    return pairs.map(lambda pair: Example(*pair))


def values(result):
    """The values of a max/min: ours and PyTorch's ``max(x, dim=int)`` return a
    (values, indices) pair; with a tuple of dims or None, the values alone."""
    return result.values if isinstance(result, tuple) else result


def _elementwise_methods(lib, x):
    return x.exp() * x.log() + x.sqrt() - x.abs().tanh() + x.sigmoid() * x.relu()


NEGATIVE_STEP = ("no PyTorch counterpart, nothing to install: PyTorch slicing has no "
                 "negative steps")
P, NZ, D = "positive", "nonzero", "distinct"

CASES: list[Case] = [
    # arithmetic: tensor (+) tensor, and Python scalars / NumPy arrays on either side
    Case("add", lambda lib, a, b: a + b, binary()),
    Case("add_scalar", lambda lib, a: a + 1.5, unary()),
    Case("radd_scalar", lambda lib, a: 1.5 + a, unary()),
    Case("add_array", lambda lib, a, c: a + c, with_constant()),
    Case("radd_array", lambda lib, a, c: c + a, with_constant()),
    Case("sub", lambda lib, a, b: a - b, binary()),
    Case("sub_scalar", lambda lib, a: a - 0.5, unary()),
    Case("rsub_scalar", lambda lib, a: 1.5 - a, unary()),
    Case("sub_array", lambda lib, a, c: a - c, with_constant()),
    Case("rsub_array", lambda lib, a, c: c - a, with_constant()),
    Case("mul", lambda lib, a, b: a * b, binary()),
    Case("mul_scalar", lambda lib, a: a * -2.5, unary()),
    Case("rmul_scalar", lambda lib, a: 3.0 * a, unary()),
    Case("mul_array", lambda lib, a, c: a * c, with_constant()),
    Case("rmul_array", lambda lib, a, c: c * a, with_constant()),
    Case("div", lambda lib, a, b: a / b, binary("real", NZ)),
    Case("div_scalar", lambda lib, a: a / 4.0, unary()),
    Case("rdiv_scalar", lambda lib, a: 1.5 / a, unary(NZ)),
    Case("div_array", lambda lib, a, c: a / c, with_constant("real", NZ)),
    Case("rdiv_array", lambda lib, a, c: c / a, with_constant(NZ, "real")),
    Case("pow", lambda lib, a, b: a ** b, binary(P, "real")),
    Case("pow_int_scalar", lambda lib, a: a ** 3.0, unary()),
    Case("pow_fractional_scalar", lambda lib, a: a ** -0.5, unary(P)),
    Case("rpow_scalar", lambda lib, a: 2.0 ** a, unary()),
    Case("pow_array", lambda lib, a, c: a ** c, with_constant(P, "real")),
    Case("rpow_array", lambda lib, a, c: c ** a, with_constant("real", P)),
    Case("neg", lambda lib, a: -a, unary()),
    Case("matmul", lambda lib, a, b: a @ b, matmul_operands()),
    Case("matmul_function", lambda lib, a, b: lib.matmul(a, b), matmul_operands()),
    Case("matmul_array", lambda lib, a, c: a @ c, matmul_operands(constant="b")),
    Case("rmatmul_array", lambda lib, b, c: c @ b, matmul_operands(constant="a")),
    # einsum: the contractions attention uses, then equations drawn at random
    *[Case(f"einsum_{name}", lambda lib, *xs, equation: lib.einsum(equation, *xs),
           _drawn(einsum_operands(equation, broadcast)))
      for name, equation, broadcast in (
          ("matmul", "ij,jk->ik", False), ("attention_scores", "bhqd,bhkd->bhqk", False),
          ("outer", "i,j->ij", False), ("trace", "ii", False), ("diagonal", "ii->i", False),
          ("ellipsis", "...ij,...jk->...ik", False), ("sum", "ij->", False),
          ("chain", "ij,jk,kl->il", False), ("size_1_broadcast", "ij,jk->ik", True),
          ("implicit_batched", "bij,bjk", True))],
    Case("einsum_list_form", lambda lib, a, b, equation: lib.einsum(equation, [a, b]),
         _drawn(einsum_operands("bqd,bkd->bqk"))),
    Case("einsum_random", lambda lib, *xs, equation: lib.einsum(equation, *xs),
         _drawn(einsum_equations())),
    # elementwise functions
    Case("exp", lambda lib, a: lib.exp(a), unary()),
    Case("log", lambda lib, a: lib.log(a), unary(P)),
    Case("sqrt", lambda lib, a: lib.sqrt(a), unary(P)),
    Case("abs", lambda lib, a: lib.abs(a), unary(NZ)),
    Case("tanh", lambda lib, a: lib.tanh(a), unary()),
    Case("sin", lambda lib, a: lib.sin(a), unary()),
    Case("cos", lambda lib, a: lib.cos(a), unary()),
    Case("sigmoid", lambda lib, a: lib.sigmoid(a), unary()),
    Case("relu", lambda lib, a: lib.relu(a), unary(NZ)),
    Case("elementwise_methods", _elementwise_methods, unary(P)),
    Case("maximum", lambda lib, a, b: lib.maximum(a, b), binary(D, D)),
    Case("minimum", lambda lib, a, b: lib.minimum(a, b), binary(D, D)),
    Case("maximum_array", lambda lib, a, c: lib.maximum(a, c), with_constant(D, D)),
    Case("minimum_array_first", lambda lib, a, c: lib.minimum(c, a), with_constant(D, D)),
    Case("where", lambda lib, a, b, cond: lib.where(cond, a, b), conditional()),
    Case("where_scalar", lambda lib, a, cond: lib.where(cond, a, 0.0), conditional(True)),
    Case("clip", lambda lib, a: lib.clip(a, *CLIP_BOUNDS), unary("off_clip")),
    Case("clip_min_only", lambda lib, a: lib.clip(a, min=CLIP_BOUNDS[0]), unary("off_clip")),
    Case("clamp_method_max_only", lambda lib, a: a.clamp(max=CLIP_BOUNDS[1]),
         unary("off_clip")),
    # reductions over an int, a tuple of ints or None, with and without keepdim
    Case("sum", lambda lib, a, dim, keepdim: lib.sum(a, dim=dim, keepdim=keepdim),
         reduction()),
    Case("sum_method", lambda lib, a, dim, keepdim: a.sum(dim, keepdim), reduction()),
    Case("mean", lambda lib, a, dim, keepdim: lib.mean(a, dim=dim, keepdim=keepdim),
         reduction()),
    Case("var", lambda lib, a, dim, keepdim, correction: lib.var(
        a, dim=dim, keepdim=keepdim, correction=correction), reduction(with_correction=True)),
    Case("max", lambda lib, a, dim, keepdim: values(lib.max(a, dim=dim, keepdim=keepdim)),
         reduction(D)),
    Case("min", lambda lib, a, dim, keepdim: values(lib.min(a, dim=dim, keepdim=keepdim)),
         reduction(D)),
    # torch.amax/amin, and dims as an int, a tuple or a list (() is every dim)
    Case("amax", lambda lib, a, dim, keepdim: lib.amax(a, dim, keepdim), _drawn(reduce_dims(D))),
    Case("amin_method", lambda lib, a, dim, keepdim: a.amin(dim=dim, keepdim=keepdim),
         _drawn(reduce_dims(D))),
    Case("amax_all", lambda lib, a: lib.amax(a), unary(D)),
    Case("sum_dims", lambda lib, a, dim, keepdim: lib.sum(a, dim, keepdim),
         _drawn(reduce_dims())),
    Case("mean_dims", lambda lib, a, dim, keepdim: a.mean(dim=dim, keepdim=keepdim),
         _drawn(reduce_dims())),
    Case("var_dims", lambda lib, a, dim, keepdim, correction: lib.var(
        a, dim=dim, keepdim=keepdim, correction=correction),
         _drawn(reduce_dims(empty=False, correction=True))),  # (): test_amax_tuple_dims.py
    Case("logsumexp_dims", lambda lib, a, dim, keepdim: lib.logsumexp(a, dim, keepdim),
         _drawn(reduce_dims(empty=False))),
    # shape
    Case("reshape", lambda lib, a, shape: lib.reshape(a, shape), reshaped()),
    Case("view", lambda lib, a, shape: a.view(shape), reshaped()),
    Case("flatten", lambda lib, a, start, end: lib.flatten(a, start, end), flattened()),
    Case("transpose", lambda lib, a, d0, d1: lib.transpose(a, d0, d1), two_dims()),
    Case("permute", lambda lib, a, order: lib.permute(a, order), permuted()),
    Case("T", lambda lib, a: a.T, unary(min_dims=2, max_dims=2)),
    Case("squeeze", lambda lib, a, dim: a.squeeze() if dim is None else a.squeeze(dim),
         squeezed()),
    Case("unsqueeze", lambda lib, a, dim: lib.unsqueeze(a, dim), unsqueezed()),
    Case("expand", lambda lib, a, sizes: a.expand(sizes), expanded()),
    # indexing
    Case("getitem_basic", lambda lib, a, key: a[key], indexed(basic_index_keys)),
    Case("getitem_negative_step", lambda lib, a, key: a[key],
         indexed(lambda shape: basic_index_keys(shape, negative_steps=True)),
         torch_skip=NEGATIVE_STEP),
    Case("getitem_mask", lambda lib, a, key: a[key], indexed(mask_keys)),
    Case("getitem_int_arrays", lambda lib, a, key: a[key], indexed(integer_array_keys)),
    # joining
    Case("cat", lambda lib, *xs, dim: lib.cat(list(xs), dim=dim), joined()),
    Case("cat_with_array", lambda lib, *xs, dim, c: lib.cat([*xs, c], dim=dim),
         joined(constant=True)),
    Case("stack", lambda lib, *xs, dim: lib.stack(list(xs), dim=dim), joined(stacking=True)),
    Case("split", lambda lib, a, how, dim: lib.split(a, how, dim), splitting()),
    Case("split_sections", lambda lib, a, how, dim: lib.split(a, how, dim),
         splitting(sections=True)),
    # softmax family
    Case("softmax", lambda lib, a, dim: lib.softmax(a, dim), along_dim()),
    Case("log_softmax", lambda lib, a, dim: lib.log_softmax(a, dim), along_dim()),
    Case("logsumexp", lambda lib, a, dim, keepdim: lib.logsumexp(a, dim, keepdim),
         along_dim(keepdim=True)),
    # masking, triangles, running sums, flips, padding, gather and scatter_add
    Case("masked_fill", lambda lib, a, mask: lib.masked_fill(a, mask, -1.5),
         _drawn(masked())),
    Case("masked_fill_value_tensor", lambda lib, a, v, mask: a.masked_fill(mask, v),
         _drawn(masked(value_tensor=True))),
    Case("masked_fill_causal_softmax", lambda lib, a, mask: lib.softmax(
        a.masked_fill(mask, float("-inf")), -1), _drawn(causal_scores())),
    Case("tril", lambda lib, a, diagonal: lib.tril(a, diagonal), _drawn(triangles())),
    Case("triu_method", lambda lib, a, diagonal: a.triu(diagonal), _drawn(triangles())),
    Case("cumsum", lambda lib, a, dim: lib.cumsum(a, dim), along_dim()),
    Case("cumsum_method", lambda lib, a, dim: a.cumsum(dim=dim), along_dim()),
    Case("flip", lambda lib, a, dims: lib.flip(a, dims), _drawn(flips())),
    Case("flip_method", lambda lib, a, dims: a.flip(*dims), _drawn(flips(min_size=1))),
    Case("pad", lambda lib, a, pad, value: lib.nn.functional.pad(a, pad, value=value),
         _drawn(pads())),
    Case("gather", lambda lib, a, dim, index: lib.gather(a, dim, index), _drawn(gathers())),
    Case("gather_method", lambda lib, a, dim, index: a.gather(dim, index), _drawn(gathers())),
    Case("scatter_add", lambda lib, a, src, dim, index: lib.scatter_add(a, dim, index, src),
         _drawn(gathers(scatter=True))),
    Case("scatter_add_method", lambda lib, a, src, dim, index: a.scatter_add(dim, index, src),
         _drawn(gathers(scatter=True))),
    # linear algebra (ops/linalg.py), on matrices kept well away from singular
    Case("linalg_det", lambda lib, a: lib.linalg.det(a), _drawn(square_matrices())),
    Case("det_method", lambda lib, a: a.det(), _drawn(square_matrices())),
    Case("linalg_inv", lambda lib, a: lib.linalg.inv(a), _drawn(square_matrices())),
    Case("inverse_method", lambda lib, a: a.inverse(), _drawn(square_matrices())),
    Case("linalg_slogdet", lambda lib, a: lib.linalg.slogdet(a).logabsdet,
         _drawn(square_matrices())),
    Case("linalg_solve", lambda lib, a, b: lib.linalg.solve(a, b), _drawn(solve_operands())),
    Case("trace", lambda lib, a: lib.trace(a), _drawn(matrices())),
    Case("trace_method", lambda lib, a: a.trace(), _drawn(matrices())),
    # ordering (ops/sorting.py): sort and topk are gathers at sorting indices; roll
    Case("topk", lambda lib, a, k, dim, flag: lib.topk(a, k, dim, largest=flag).values,
         sorting(topk=True)),
    Case("sort_method", lambda lib, a, dim, flag: a.sort(dim, descending=flag).values,
         sorting()),
    Case("roll", lambda lib, a, shifts, dims: lib.roll(a, shifts, dims), rolled()),
    Case("roll_flat_method", lambda lib, a, shifts, dims: a.roll(shifts), rolled(False)),
    # activations (nn.functional only: torch has no torch.gelu, ...); softplus and
    # leaky_relu off their kinks at 0
    Case("gelu", lambda lib, a: lib.nn.functional.gelu(a), unary()),
    Case("gelu_tanh", lambda lib, a: lib.nn.functional.gelu(a, approximate="tanh"), unary()),
    Case("silu", lambda lib, a: lib.nn.functional.silu(a), unary()),
    Case("softplus", lambda lib, a: lib.nn.functional.softplus(a), unary()),
    Case("softplus_beta_threshold",
         lambda lib, a: lib.nn.functional.softplus(a, beta=2.0, threshold=0.0), unary(NZ)),
    Case("leaky_relu", lambda lib, a: lib.nn.functional.leaky_relu(a), unary(NZ)),
    Case("leaky_relu_slope", lambda lib, a: lib.nn.functional.leaky_relu(a, 0.2), unary(NZ)),
    # layer norm and RMS norm over the last 1-3 dims (PyTorch's double backward of
    # layer_norm with a bias and no weight fails: that case is in test_layer_norm.py)
    Case("layer_norm", lambda lib, x, shape, eps: lib.nn.functional.layer_norm(
        x, shape, eps=eps), normalized(eps=True)),
    Case("layer_norm_affine", lambda lib, x, w, b, shape: lib.nn.functional.layer_norm(
        x, shape, w, b), normalized(affine=2)),
    Case("layer_norm_weight", lambda lib, x, w, shape: lib.nn.functional.layer_norm(
        x, shape, w), normalized(affine=1)),
    Case("rms_norm", lambda lib, x, shape: lib.nn.functional.rms_norm(x, shape),
         normalized(domain=NZ)),
    Case("rms_norm_weight_eps", lambda lib, x, w, shape, eps: lib.nn.functional.rms_norm(
        x, shape, w, eps=eps), normalized(affine=1, domain=NZ, eps=True)),
    # classification losses with ignored targets and label smoothing, (N, C, d1, ...) too
    Case("cross_entropy_options", lambda lib, a, **options: lib.nn.functional.cross_entropy(
        a, **options), _drawn(class_targets())),
    Case("nll_loss_ignore_index", lambda lib, a, **options: lib.nn.functional.nll_loss(
        a, **options), _drawn(class_targets(smoothing=False))),
    # attention: not an op but matmul, mul, add, softmax, matmul composed (nn/attention.py);
    # bool masks that mask whole rows, float masks that get a gradient, causal (GQA: in
    # test_attention.py, as PyTorch's GQA path has no forward mode or double backward)
    Case("scaled_dot_product_attention", lambda lib, q, k, v, **kw:
         lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw),
         _drawn(attention_inputs())),
    Case("sdpa_bool_mask", lambda lib, q, k, v, **kw:
         lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw),
         _drawn(attention_inputs("bool"))),
    Case("sdpa_float_mask", lambda lib, q, k, v, m, **kw:
         lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw),
         _drawn(attention_inputs("float"))),
    Case("sdpa_causal", lambda lib, q, k, v, **kw:
         lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw),
         _drawn(attention_inputs("causal"))),
]


# -- running a case ---------------------------------------------------------------------
def leaf(data: np.ndarray, layout: Layout = CONTIGUOUS, dtype=np.float64) -> ag.Tensor:
    """A leaf tensor holding ``data`` stored with ``layout`` (strides included):
    the storage is wrapped, viewed through the engine, and the view detached."""
    storage = ag.tensor(layout.storage(np.asarray(data, dtype=dtype)))
    return layout.view(storage).detach().requires_grad_()


def as_outputs(result) -> list:
    return list(result) if isinstance(result, tuple | list) else [result]


def run_engine(case: Case, example: Example, layouts_=None, dtype=np.float64):
    """(leaves, outputs) of the case's program on this engine."""
    layouts_ = layouts_ or [CONTIGUOUS] * len(example.inputs)
    leaves = [leaf(x, lay, dtype) for x, lay in zip(example.inputs, layouts_, strict=True)]
    return leaves, as_outputs(case.program(ag, *leaves, **example.params))


def backward_all(outputs: list, upstream: list) -> None:
    """``y.backward(gradient=v)`` for each output (keeping the graph until the last)."""
    for i, (y, v) in enumerate(zip(outputs, upstream, strict=True)):
        y.backward(gradient=v, retain_graph=i < len(outputs) - 1)


def draw_upstream(data, outputs: list) -> list:
    return [data.draw(upstream_gradients(y.shape), label="v") for y in outputs]


def numeric_vjp(case: Case, example: Example, upstream: list, eps: float = 1e-6) -> list:
    """Central differences of ``sum(v * f(x))`` with respect to each input, in float64:
    the reference the engine's ``backward(gradient=v)`` is compared with."""

    def objective(inputs) -> float:
        with ag.no_grad():
            outs = as_outputs(case.program(ag, *map(ag.tensor, inputs), **example.params))
        return sum(float(np.sum(v * y.numpy())) for y, v in zip(outs, upstream, strict=True))

    return central_differences(objective, example.inputs, eps)


def central_differences(objective: Callable, inputs, eps: float = 1e-6) -> list:
    """d objective / d each of ``inputs`` by central differences in float64: each element
    nudged by ±eps in turn, ``objective(list of arrays) -> float``."""
    values = [np.array(x, dtype=np.float64) for x in inputs]
    grads = []
    for x in values:
        grad = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            original = x[index]
            x[index] = original + eps
            plus = objective(values)
            x[index] = original - eps
            minus = objective(values)
            x[index] = original
            grad[index] = (plus - minus) / (2 * eps)
        grads.append(grad)
    return grads


def case_ids(case: Case) -> str:
    return case.name
