"""Deep-learning ops as functions, with PyTorch's names and argument order.

Each function checks its arguments (with an error that names the shapes and says
how to fix them) and applies one op from ``autograd_core/ops``: ``conv2d``,
``max_pool2d``, ``avg_pool2d``, ``batch_norm``, ``layer_norm``, ``rms_norm``,
``dropout``, ``embedding``, ``linear``, and the losses ``nll_loss``,
``cross_entropy`` (= log_softmax then nll_loss, so the graph shows both), ``mse_loss`` and
``binary_cross_entropy_with_logits``; the activations ``gelu``, ``silu``, ``softplus``
and ``leaky_relu``. ``relu``, ``tanh``, ``sigmoid``, ``softmax`` and
``log_softmax`` are the engine's own, re-exported so that ``F.relu`` works;
``scaled_dot_product_attention`` (nn/attention.py) is not one op but matmul, mul, add,
softmax (and dropout) composed, so the graph shows each step.

The losses take ``reduction`` by keyword only ('mean', 'sum' or 'none'), as it is
always passed in PyTorch programs, and so ``ignore_index`` (nll_loss, cross_entropy)
and ``label_smoothing`` (cross_entropy); PyTorch's rarely used class weights are not
supported.

>>> import autograd_core as ag
>>> from autograd_core.nn import functional as F
>>> x = ag.randn(2, 3, 8, 8)
>>> w = ag.randn(4, 3, 3, 3, requires_grad=True)
>>> F.conv2d(x, w, padding=1).shape
(2, 4, 8, 8)
"""

from __future__ import annotations

import numpy as np

from .. import errors
from ..ops import activations as _act
from ..ops import api as ag_api
from ..ops import conv as _conv
from ..ops import layer_norm as _layer_norm
from ..ops import masking as _masking
from ..ops import nn_ops, normalization, pooling
from ..ops.api import log_softmax, relu, sigmoid, softmax, tanh
from ..ops.api import tensor_operand as _tensor_like
from ..recording import creation
from ..recording.grad_mode import no_grad
from ..recording.tensor import Tensor, tensor
from .attention import scaled_dot_product_attention

__all__ = [
    "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm", "dropout",
    "embedding", "linear",
    "layer_norm", "rms_norm",
    "nll_loss", "cross_entropy", "mse_loss", "binary_cross_entropy_with_logits",
    "relu", "tanh", "sigmoid", "softmax", "log_softmax",
    "gelu", "silu", "softplus", "leaky_relu",
    "pad",
    "scaled_dot_product_attention",
]

_REDUCTIONS = ("mean", "sum", "none")


def _as_tensor(x) -> Tensor:
    """A Tensor as is; NumPy arrays, lists and numbers as a constant tensor."""
    return x if isinstance(x, Tensor) else tensor(x)


def _constant(x):
    """An input that gets no gradient: a Tensor as is (the graph view shows its name),
    anything else as an array."""
    return x if isinstance(x, Tensor) else np.asarray(x)


def _values(x) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _pair(op: str, name: str, value) -> tuple[int, int]:
    """An int, a 1-tuple or a pair of ints as (height, width). Like PyTorch, a value
    that is not made of ints is a TypeError and a tuple of another length a
    RuntimeError."""
    pair = tuple(value) if isinstance(value, tuple | list) else (value, value)
    if not all(isinstance(v, int | np.integer) for v in pair):
        raise errors.pair_argument(op, name, value)
    if len(pair) == 1:
        pair = pair * 2
    if len(pair) != 2:
        raise errors.pair_length(op, name, pair)
    return int(pair[0]), int(pair[1])


def _positive(op: str, name: str, value) -> tuple[int, int]:
    pair = _pair(op, name, value)
    if min(pair) <= 0:
        raise errors.not_positive(op, name, value)
    return pair


def _image_input(op: str, x: Tensor) -> None:
    if x.ndim not in (3, 4):
        raise errors.layer_input_rank(op, "3D (unbatched) or 4D (batched)", x.shape)


def _check_window_fits(op: str, x: Tensor, span: tuple, padding: tuple) -> None:
    padded = tuple(s + 2 * p for s, p in zip(x.shape[-2:], padding))
    if any(k > s for k, s in zip(span, padded)):
        raise errors.kernel_too_large(op, padded, span)


# -- convolution and pooling ----------------------------------------------------------------
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation, as in every deep-learning library) of an
    (N, C, H, W) or (C, H, W) input with a (out_channels, C / groups, kh, kw) weight.

    ``stride``, ``padding`` (zeros) and ``dilation`` are an int or a (height, width)
    pair. Output size per axis: (size + 2·padding - dilation·(k - 1) - 1) // stride + 1.
    ``padding`` may also be ``'valid'`` (none) or ``'same'`` (the output keeps the
    input's height and width; stride 1 only).

    >>> x = ag.randn(1, 1, 5, 5)
    >>> conv2d(x, ag.randn(2, 1, 3, 3), stride=2).shape
    (1, 2, 2, 2)
    """
    op = "conv2d"
    input, weight = _as_tensor(input), _as_tensor(weight)
    _image_input(op, input)
    if weight.ndim != 4:
        raise errors.conv_weight_rank(weight.shape)
    stride = _positive(op, "stride", stride)
    dilation = _positive(op, "dilation", dilation)
    kh, kw = weight.shape[2:]
    span = (dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1)
    if isinstance(padding, str):
        padding, crop = conv_padding_from_string(padding, stride, span)
    else:
        padding, crop = _pair(op, "padding", padding), (0, 0)
    if min(padding) < 0:
        raise errors.negative_padding(op, padding)
    if not isinstance(groups, int | np.integer) or groups <= 0:
        raise errors.not_positive(op, "groups", groups)
    if weight.shape[0] % groups:
        raise errors.conv_groups(groups, weight.shape)
    if input.shape[-3] != weight.shape[1] * groups:
        raise errors.conv_channels(groups, weight.shape, input.shape, weight.shape[1] * groups)
    _check_window_fits(op, input, span, padding)
    params = dict(stride=stride, padding=padding, dilation=dilation, groups=int(groups))
    if bias is None:
        out = _conv.Conv2d.apply(input, weight, **params)
    else:
        bias = _as_tensor(bias)
        if bias.shape != weight.shape[:1]:
            raise errors.conv_bias(weight.shape, bias.shape)
        out = _conv.Conv2d.apply(input, weight, bias, **params)
    return out[..., crop[0]:, crop[1]:] if any(crop) else out


def conv_padding_from_string(padding: str, stride: tuple[int, int], span: tuple[int, int],
                             error_type: type = RuntimeError,
                             ) -> tuple[tuple[int, int], tuple[int, int]]:
    """``padding='valid'`` or ``'same'`` as (symmetric padding, rows and columns to
    drop from the start of the output).

    'same' must pad ``span - 1`` in all per axis; when that is odd, PyTorch puts the
    extra zero at the bottom (right). A symmetric convolution cannot, so it pads one
    more on both sides and drops the output's first row (column): the same windows.
    """
    if padding == "valid":
        return (0, 0), (0, 0)
    if padding != "same":
        raise errors.padding_string(padding, error_type)
    if stride != (1, 1):
        raise errors.same_padding_strided(error_type)
    totals = [s - 1 for s in span]
    pads = tuple((t + 1) // 2 for t in totals)
    crops = tuple(t % 2 for t in totals)
    return pads, crops


def _pool_args(op: str, input, kernel_size, stride, padding):
    input = _as_tensor(input)
    _image_input(op, input)
    kernel = _positive(op, "kernel_size", kernel_size)
    omitted = stride is None or (isinstance(stride, tuple | list) and not stride)
    stride = kernel if omitted else _positive(op, "stride", stride)
    padding = _pair(op, "padding", padding)
    if min(padding) < 0:
        raise errors.negative_padding(op, padding)
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise errors.pool_padding(op, padding, kernel)
    _check_window_fits(op, input, kernel, padding)
    return input, dict(kernel_size=kernel, stride=stride, padding=padding)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0) -> Tensor:
    """The maximum of each kh x kw window (stride defaults to the kernel size; padding
    is -inf). The gradient goes to the maximum; on a tie to the first one in
    row-major window order, like PyTorch.

    >>> max_pool2d(ag.randn(1, 1, 4, 4), 2).shape
    (1, 1, 2, 2)
    """
    input, params = _pool_args("max_pool2d", input, kernel_size, stride, padding)
    return pooling.MaxPool2d.apply(input, **params)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0) -> Tensor:
    """The mean of each kh x kw window (stride defaults to the kernel size). Zero
    padding counts in the mean (PyTorch's ``count_include_pad=True``); each input
    of a window gets 1/(kh·kw) of its gradient.

    >>> avg_pool2d(ag.ones(1, 1, 4, 4), 2).tolist()
    [[[[1.0, 1.0], [1.0, 1.0]]]]
    """
    input, params = _pool_args("avg_pool2d", input, kernel_size, stride, padding)
    return pooling.AvgPool2d.apply(input, **params)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """The mean of each of oh x ow windows that cover (N, C, H, W) or (C, H, W): window
    i spans rows floor(i·H/oh) to ceil((i+1)·H/oh), as in PyTorch (``None`` keeps a
    size). Sizes that divide evenly are one ``avg_pool2d``; others are means of slices,
    joined with ``cat``, so each input gets 1/(window size) of each window's gradient.

    >>> adaptive_avg_pool2d(ag.ones(1, 2, 5, 5), (1, 1)).shape
    (1, 2, 1, 1)
    """
    input = _as_tensor(input)
    if input.ndim not in (3, 4):
        raise errors.adaptive_pool_input(input.shape)
    sizes = (output_size, output_size) if not isinstance(output_size, tuple | list) \
        else tuple(output_size)
    if len(sizes) != 2 or not all(s is None or (isinstance(s, int | np.integer)
                                                and not isinstance(s, bool) and s > 0)
                                  for s in sizes):
        raise errors.adaptive_pool_size(output_size)
    height, width = input.shape[-2:]
    oh, ow = (height if sizes[0] is None else int(sizes[0]),
              width if sizes[1] is None else int(sizes[1]))
    if height % oh == 0 and width % ow == 0:
        batched = input if input.ndim == 4 else ag_api.unsqueeze(input, 0)
        out = avg_pool2d(batched, (height // oh, width // ow))
        return out if input.ndim == 4 else ag_api.squeeze(out, 0)
    out = input
    for axis, (size, parts) in enumerate(((height, oh), (width, ow))):
        dim = input.ndim - 2 + axis
        starts = [i * size // parts for i in range(parts)]
        ends = [-(-(i + 1) * size // parts) for i in range(parts)]  # ceil
        out = ag_api.cat([ag_api.mean(out.narrow(dim, start, end - start), dim, keepdim=True)
                          for start, end in zip(starts, ends, strict=True)], dim)
    return out


# -- normalisation and dropout --------------------------------------------------------------
def _check_per_channel(name: str, t, channels: int) -> None:
    if t is not None and (t.ndim != 1 or t.shape[0] != channels):
        raise errors.layer_weight_length("batch_norm", name, channels,
                                         t.shape[0] if t.ndim == 1 else list(t.shape))


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) of an (N, C) or (N, C, H, W) input, then scale
    by ``weight`` and shift by ``bias`` (both (C,), optional).

    Training: the batch's mean and biased variance, and the running estimates (if
    given) are updated in place: running = (1 - momentum)·running + momentum·batch
    statistic, with the *unbiased* variance for running_var. Evaluation: the running
    estimates.

    >>> mean, var = ag.zeros(3), ag.ones(3)
    >>> y = batch_norm(ag.randn(8, 3), mean, var, training=True)   # updates mean, var
    """
    input = _as_tensor(input)
    if input.ndim < 2:
        raise errors.layer_input_rank("batch_norm", "2D (N, C) or 4D (N, C, H, W)",
                                      input.shape)
    channels = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_per_channel(name, t, channels)
    if training:
        # Values per channel: N·H·W (not numel // C, which a (N, 0) input divides by 0).
        per_channel = input.shape[0] * int(np.prod(input.shape[2:]))
        if per_channel == 1:
            raise errors.batch_norm_single_value(input.shape)
        mean, var = normalization.batch_statistics(input._data)
        # An empty batch has no statistics: like PyTorch, the running ones stay as they are.
        if running_mean is not None and running_var is not None and per_channel:
            unbiased = var.reshape(-1) * (per_channel / (per_channel - 1))
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.reshape(-1) * momentum)
                running_var.mul_(1 - momentum).add_(unbiased * momentum)
        op = normalization.BatchNorm
    else:
        if running_mean is None or running_var is None:
            raise errors.batch_norm_no_running_stats()
        mean, var = running_mean._data, running_var._data
        shape = (channels,) + (1,) * (input.ndim - 2)
        mean, var = mean.reshape(shape), var.reshape(shape)
        op = normalization.BatchNormEval
    # The op's inputs are (x), (x, weight) or (x, weight, bias); a missing weight
    # in front of a bias is the constant 1.
    affine = []
    if weight is not None or bias is not None:
        affine.append(weight if weight is not None else 1.0)
    if bias is not None:
        affine.append(bias)
    return op.apply(input, *affine, mean=mean, var=var, eps=eps)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, *,
            generator: creation.Generator | None = None) -> Tensor:
    """Training: zero each element with probability ``p`` and scale the kept ones by
    1/(1 - p), so the expected value is unchanged (p = 1 gives zeros). The mask comes
    from ``generator`` (default: the engine's default generator, see ``manual_seed``).
    Evaluation (or p = 0): the input itself, no op recorded. ``inplace=True`` is refused
    (nothing in place is recorded); ``generator`` is keyword-only, after PyTorch's four.

    >>> y = dropout(ag.ones(4), 0.5, generator=ag.Generator(0))   # values 0 or 2
    """
    if not (isinstance(p, int | float | np.floating) and 0 <= p <= 1):
        raise errors.dropout_probability(p)
    _no_inplace("dropout", inplace)
    if not training or p == 0:
        return input
    generator = generator if generator is not None else creation.default_generator
    return nn_ops.Dropout.apply(_as_tensor(input), p=float(p), generator=generator)


# -- layer norm and RMS norm -----------------------------------------------------------------
def _norm_args(op: str, input, normalized_shape, weight, bias, eps, eps_position: int):
    """(input, normalized_shape, the op's axes, weight, bias, eps) checked in PyTorch's
    order: normalized_shape's type and length, weight and bias shapes, then the input's
    trailing dims. ``eps=None`` (rms_norm's default) is the input dtype's machine epsilon."""
    input = _as_tensor(input)
    ints = isinstance(normalized_shape, tuple | list) and all(
        isinstance(d, int | np.integer) and not isinstance(d, bool) for d in normalized_shape)
    if not ints:
        raise errors.normalized_shape_type(op, normalized_shape)
    shape = tuple(int(d) for d in normalized_shape)
    if not shape:
        raise errors.normalized_shape_empty()
    weight, bias = (None if t is None else _as_tensor(t) for t in (weight, bias))
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.shape != shape:
            raise errors.norm_affine_shape(name, t.shape, shape)
    if op == "rms_norm" and len(shape) > input.ndim:
        raise errors.rms_norm_rank(len(shape), input.ndim)
    if input.shape[input.ndim - len(shape):] != shape or len(shape) > input.ndim:
        raise errors.normalized_shape_mismatch(shape, input.shape)
    if eps is None and op == "rms_norm":  # float16: float32's, which PyTorch computes in
        eps = np.finfo(np.result_type(input.dtype, np.float32)).eps
    if not isinstance(eps, int | float | np.floating) or isinstance(eps, bool):
        raise errors.norm_eps_type(op, eps_position, eps, optional=op == "rms_norm")
    return input, tuple(range(-len(shape), 0)), weight, bias, float(eps)


def layer_norm(input: Tensor, normalized_shape: tuple[int, ...] | list[int],
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise each row over its last dims ``normalized_shape`` (a tuple or list of
    ints, as in PyTorch: ``(768,)``; an int is a TypeError, the module ``nn.LayerNorm``
    takes one): subtract the row's mean, divide by sqrt(its biased variance + eps), then
    scale by ``weight`` and shift by ``bias`` (both of shape ``normalized_shape``).

    One op, ``layer_norm``, that saves x̂ (the input's size) and one 1/std per row
    (``ops/layer_norm.py`` says why and how big).

    >>> y = layer_norm(ag.tensor([[1.0, 2.0, 3.0]]), (3,))
    >>> [round(v, 4) for v in y.tolist()[0]]
    [-1.2247, 0.0, 1.2247]
    """
    input, axes, weight, bias, eps = _norm_args("layer_norm", input, normalized_shape,
                                                weight, bias, eps, 5)
    affine = []  # the op's inputs: (x), (x, weight) or (x, weight, bias)
    if weight is not None or bias is not None:
        affine.append(weight if weight is not None else 1.0)
    if bias is not None:
        affine.append(bias)
    return _layer_norm.LayerNorm.apply(input, *affine, axes=axes, eps=eps)


def rms_norm(input: Tensor, normalized_shape: tuple[int, ...] | list[int],
             weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """Divide each row by its root mean square over its last dims ``normalized_shape``
    (a tuple or list of ints), sqrt(mean(x²) + eps), then scale by ``weight`` (of shape
    ``normalized_shape``). No centring and no bias. ``eps=None``: the machine epsilon of
    the input's dtype (``np.finfo(dtype).eps``; float16: float32's), as in PyTorch.

    >>> rms_norm(ag.tensor([[3.0, 4.0]]), (2,), eps=0.0).tolist()[0][0] == 3 / 12.5 ** 0.5
    True
    """
    input, axes, weight, _, eps = _norm_args("rms_norm", input, normalized_shape, weight,
                                             None, eps, 4)
    affine = () if weight is None else (weight,)
    return _layer_norm.RMSNorm.apply(input, *affine, axes=axes, eps=eps)


# -- padding -------------------------------------------------------------------------------------
def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Put ``value`` (None: 0) around the last dims of ``input``. ``pad`` lists (before,
    after) pairs from the last dim backwards, as in PyTorch: ``(left, right)`` pads the
    last dim, ``(left, right, top, bottom)`` the last two, and so on; a negative pad crops.
    Only ``mode='constant'`` is supported (others raise NotImplementedError).

    >>> pad(ag.ones(2, 3), (1, 2)).shape
    (2, 6)
    """
    input = _as_tensor(input)
    pads = _masking.check_pad(pad, mode, input.shape)
    if value is None:
        value = 0.0
    value = _masking.check_fill_value("pad", value, input.dtype)
    if isinstance(value, Tensor | np.ndarray):
        value = _values(value).item()
    return _masking.Pad.apply(input, pad=pads, value=value)


# -- embedding and linear ------------------------------------------------------------------------
def embedding(input, weight: Tensor) -> Tensor:
    """Row ``input[i]`` of the table ``weight`` (num_embeddings, dim) for every index:
    output shape ``input.shape + (dim,)``. Repeated indices add up their gradients.

    >>> table = ag.randn(10, 3, requires_grad=True)
    >>> embedding(ag.tensor([[1, 2], [1, 9]]), table).shape
    (2, 2, 3)
    """
    input = _constant(input)
    indices = _values(input)
    weight = _as_tensor(weight)
    if indices.dtype.kind not in "iu":
        raise errors.embedding_indices_dtype(indices.dtype)
    if weight.ndim != 2:
        raise errors.embedding_weight_rank(weight.shape)
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise errors.embedding_index_range(int(indices.min()), int(indices.max()),
                                           weight.shape[0])
    return nn_ops.Embedding.apply(input, weight)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weightᵀ + bias, with weight laid out (out_features, in_features) like
    PyTorch; input (..., in_features) -> output (..., out_features).

    One op (not matmul + add), so the graph shows one "linear" node that saves its
    input (for dweight) and its weight (for dinput), each only when needed.

    >>> linear(ag.ones(5, 3), ag.ones(2, 3), ag.zeros(2)).shape
    (5, 2)
    """
    input, weight = _as_tensor(input), _as_tensor(weight)
    if weight.ndim != 2 or input.ndim == 0 or input.shape[-1] != weight.shape[1]:
        raise errors.linear_shapes(input.shape, weight.shape)
    if bias is None:
        return nn_ops.Linear.apply(input, weight)
    bias = _as_tensor(bias)
    if bias.shape != weight.shape[:1]:
        raise errors.layer_weight_length("linear", "bias", weight.shape[0],
                                         list(bias.shape))
    return nn_ops.Linear.apply(input, weight, bias)


# -- activations -----------------------------------------------------------------------------
def _activation_input(op: str, input) -> Tensor:
    """The input as a Tensor (anything tensor-like); integer and boolean data are refused,
    as PyTorch refuses them (NotImplementedError)."""
    x = _tensor_like(op, input)
    if x.dtype.kind != "f":
        raise errors.not_floating(op, x.dtype)
    return x


def _number(op: str, name: str, value) -> float:
    """A number argument as a float: a Python or NumPy number, or a 0-d tensor (which
    PyTorch takes as a Number too); anything else is PyTorch's TypeError."""
    if isinstance(value, Tensor) and value.ndim == 0:
        return float(value.item())
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value)
    raise errors.not_a_number(op, name, value)


def _check_approximate(approximate) -> str:
    """gelu's ``approximate``: 'none' or 'tanh', else PyTorch's TypeError or RuntimeError."""
    if not isinstance(approximate, str):
        raise errors.gelu_approximate_type(approximate)
    if approximate not in ("none", "tanh"):
        raise errors.gelu_approximate(approximate)
    return approximate


def _no_inplace(op: str, inplace) -> None:
    if inplace:
        raise errors.inplace_activation(op)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """GELU(x) = x · Φ(x), Φ the standard normal CDF, elementwise (Φ written in NumPy: from
    erf to float64 accuracy for float64 inputs, in float32 within 10 ulps for float32
    ones; ``ops/special.py``). ``approximate='tanh'``: PyTorch's approximation
    x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))). One op; it saves its input.

    >>> round(gelu(ag.tensor(1.0)).item(), 6), round(gelu(ag.tensor(1.0), 'tanh').item(), 6)
    (0.841345, 0.841192)
    """
    _check_approximate(approximate)
    x = _activation_input("gelu", input)
    return (_act.Gelu if approximate == "none" else _act.GeluTanh).apply(x)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """SiLU(x) = x · sigmoid(x) (swish), elementwise. One op; it saves its input.
    ``inplace=True`` is refused: this engine records no in-place op.

    >>> round(silu(ag.tensor(1.0)).item(), 6)
    0.731059
    """
    _no_inplace("silu", inplace)
    return _act.Silu.apply(_activation_input("silu", input))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """Softplus(x) = log(1 + exp(beta · x)) / beta, elementwise, and x itself where
    beta · x > threshold (PyTorch's switch to the line it approaches). The gradient is
    sigmoid(beta · x), and 1 where the output is x. One op; it saves its input.

    >>> round(softplus(ag.tensor(0.0)).item(), 6), softplus(ag.tensor(30.0)).item()
    (0.693147, 30.0)
    """
    beta = _number("softplus", "beta", beta)
    threshold = _number("softplus", "threshold", threshold)
    return _act.Softplus.apply(_activation_input("softplus", input), beta=beta,
                               threshold=threshold)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope · x, elementwise; the gradient at 0 is
    negative_slope, as in PyTorch. One op; it saves a 0/1 mask of x > 0.
    ``inplace=True`` is refused: this engine records no in-place op.

    >>> leaky_relu(ag.tensor([-2.0, 3.0]), 0.1).tolist()
    [-0.2, 3.0]
    """
    negative_slope = _number("leaky_relu", "negative_slope", negative_slope)
    _no_inplace("leaky_relu", inplace)
    return _act.LeakyRelu.apply(_activation_input("leaky_relu", input),
                                negative_slope=negative_slope)


# -- losses ------------------------------------------------------------------------------------
def _check_reduction(reduction) -> None:
    if reduction not in _REDUCTIONS:
        raise errors.bad_reduction(reduction)


def _check_class_options(op: str, ignore_index, label_smoothing=0.0) -> None:
    """ignore_index an int; label_smoothing a number in [0, 1]."""
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
        raise errors.loss_option_type(op, "ignore_index", "int", ignore_index)
    if not isinstance(label_smoothing, (int, float, np.integer, np.floating)):
        raise errors.loss_option_type(op, "label_smoothing", "float", label_smoothing)
    if not 0.0 <= label_smoothing <= 1.0:  # also refuses nan
        raise errors.label_smoothing_range(label_smoothing)


def _check_class_target(op: str, input: Tensor, target, ignore_index: int = -100) -> None:
    """Class indices: integers of the input's shape without dim 1, each in [0, C) or
    equal to ``ignore_index``."""
    target = _values(target)
    if input.ndim < 2:
        raise errors.class_input_rank(op, input.shape)
    if target.dtype.kind not in "iu":
        raise errors.class_target_dtype(op, target.dtype)
    expected = input.shape[:1] + input.shape[2:]
    if target.shape[:1] != expected[:1]:
        raise errors.target_batch_size(input.shape, target.shape)
    if target.shape != expected:
        raise errors.class_target_shape(op, input.shape, target.shape, expected)
    classes = input.shape[1]
    bad = target[((target < 0) | (target >= classes)) & (target != ignore_index)]
    if bad.size:
        raise errors.class_target_range(op, int(bad[0]), classes)


def _nll(log_probs: Tensor, target, reduction: str, ignore_index: int,
         label_smoothing: float = 0.0) -> Tensor:
    """The nll_loss op of both losses: NLLLoss when every target counts and there is no
    smoothing (its rule is the plain one), else SmoothedNLLLoss (the same code, the rule
    with q); both are shown as nll_loss."""
    if label_smoothing or (_values(target) == ignore_index).any():
        return nn_ops.SmoothedNLLLoss.apply(log_probs, _constant(target), reduction=reduction,
                                            ignore_index=int(ignore_index),
                                            label_smoothing=float(label_smoothing))
    return nn_ops.NLLLoss.apply(log_probs, _constant(target), reduction=reduction)


def nll_loss(input: Tensor, target, *, reduction: str = "mean",
             ignore_index: int = -100) -> Tensor:
    """Negative log-likelihood of the target classes: -input[n, target[n]], where
    ``input`` holds log-probabilities (N, C) or (N, C, d1, ...) (e.g. from
    ``log_softmax``) and ``target`` the class indices (N,) or (N, d1, ...).

    As in PyTorch, a sample whose target is ``ignore_index`` contributes 0 and is not
    counted: 'mean' divides by the number of the other samples (nan if there are none).

    >>> logp = log_softmax(ag.tensor([[2.0, 0.0]]), dim=1)
    >>> round(nll_loss(logp, ag.tensor([0])).item(), 4)
    0.1269
    """
    _check_reduction(reduction)
    _check_class_options("nll_loss", ignore_index)
    input = _as_tensor(input)
    _check_class_target("nll_loss", input, target, ignore_index)
    return _nll(input, target, reduction, ignore_index)


def cross_entropy(input: Tensor, target, *, reduction: str = "mean", ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy of logits (N, C) (or (N, C, d1, ...)) against class indices (N,)
    (or (N, d1, ...)): log_softmax along the class axis (computed stably) followed by
    nll_loss.

    ``ignore_index``: as in ``nll_loss``. ``label_smoothing`` = ε in [0, 1] replaces
    the one-hot target by (1 - ε) · one_hot + ε / C, PyTorch's formula: the loss of
    sample n is (1 - ε) · nll[n] + ε / C · (-Σ_c log_softmax(input)[n, c]), 0 for an
    ignored sample, and 'mean' divides by the number of samples not ignored.

    >>> round(cross_entropy(ag.tensor([[2.0, 0.0]]), ag.tensor([0])).item(), 4)
    0.1269
    >>> round(cross_entropy(ag.tensor([[2.0, 0.0]]), ag.tensor([0]),
    ...                     label_smoothing=0.2).item(), 4)
    0.3269
    """
    _check_reduction(reduction)
    _check_class_options("cross_entropy", ignore_index, label_smoothing)
    input = _as_tensor(input)
    _check_class_target("cross_entropy", input, target, ignore_index)
    return _nll(log_softmax(input, dim=1), target, reduction, ignore_index, label_smoothing)


def _same_shape(op: str, input: Tensor, target) -> Tensor:
    target = _as_tensor(target)
    if target.shape != input.shape:
        raise errors.loss_target_shape(op, input.shape, target.shape)
    return target


def mse_loss(input: Tensor, target, *, reduction: str = "mean") -> Tensor:
    """Squared error (input - target)², averaged (or summed, or kept elementwise).

    Unlike PyTorch (which warns and broadcasts), input and target must have the same
    shape: broadcasting (N, 1) against (N,) silently builds an (N, N) comparison.

    >>> mse_loss(ag.tensor([1.0, 3.0]), ag.tensor([0.0, 0.0])).item()
    5.0
    """
    _check_reduction(reduction)
    input = _as_tensor(input)
    target = _same_shape("mse_loss", input, target)
    return nn_ops.MSELoss.apply(input, target, reduction=reduction)


def binary_cross_entropy_with_logits(input: Tensor, target, *,
                                     reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of logits against targets in [0, 1] (same shape), computed
    stably without forming sigmoid(input): max(x, 0) - x·t + log(1 + exp(-|x|)).

    >>> round(binary_cross_entropy_with_logits(ag.tensor([0.0]), ag.tensor([1.0])).item(), 4)
    0.6931
    """
    _check_reduction(reduction)
    input = _as_tensor(input)
    target = _same_shape("binary_cross_entropy_with_logits", input, target)
    return nn_ops.BCEWithLogits.apply(input, target, reduction=reduction)
