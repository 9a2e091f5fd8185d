"""Deep-learning ops as functions, with PyTorch's names and argument order.

Each function checks its arguments (with an error that names the shapes and says
how to fix them) and applies one op from ``autograd_core/ops``: ``conv2d``,
``max_pool2d``, ``avg_pool2d``, ``batch_norm``, ``dropout``, ``embedding``,
``linear``, and the losses ``nll_loss``, ``cross_entropy`` (= log_softmax then
nll_loss, so the graph shows both), ``mse_loss`` and
``binary_cross_entropy_with_logits``. ``relu``, ``tanh``, ``sigmoid``, ``softmax`` and
``log_softmax`` are the engine's own, re-exported so that ``F.relu`` works.

The losses take ``reduction`` by keyword only ('mean', 'sum' or 'none'), as it is
always passed in PyTorch programs; PyTorch's rarely used positional arguments
before it (class weights, ignore_index...) are not supported.

>>> import autograd_core as ag
>>> from autograd_core.nn import functional as F
>>> x = ag.randn(2, 3, 8, 8)
>>> w = ag.randn(4, 3, 3, 3, requires_grad=True)
>>> F.conv2d(x, w, padding=1).shape
(2, 4, 8, 8)
"""

from __future__ import annotations

import numpy as np

from .. import creation, errors
from ..grad_mode import no_grad
from ..op_functions import log_softmax, relu, sigmoid, softmax, tanh
from ..ops import conv as _conv
from ..ops import nn_ops, normalization, pooling
from ..tensor import Tensor, tensor

__all__ = [
    "conv2d", "max_pool2d", "avg_pool2d", "batch_norm", "dropout", "embedding", "linear",
    "nll_loss", "cross_entropy", "mse_loss", "binary_cross_entropy_with_logits",
    "relu", "tanh", "sigmoid", "softmax", "log_softmax",
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


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            generator: creation.Generator | None = None) -> Tensor:
    """Training: zero each element with probability ``p`` and scale the kept ones by
    1/(1 - p), so the expected value is unchanged (p = 1 gives zeros). The mask comes
    from ``generator`` (default: the engine's default generator, see ``manual_seed``).
    Evaluation (or p = 0): the input itself, no op recorded.

    >>> y = dropout(ag.ones(4), 0.5, generator=ag.Generator(0))   # values 0 or 2
    """
    if not (isinstance(p, int | float | np.floating) and 0 <= p <= 1):
        raise errors.dropout_probability(p)
    if not training or p == 0:
        return input
    generator = generator if generator is not None else creation.default_generator
    return nn_ops.Dropout.apply(_as_tensor(input), p=float(p), generator=generator)


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


# -- losses ------------------------------------------------------------------------------------
def _check_reduction(reduction) -> None:
    if reduction not in _REDUCTIONS:
        raise errors.bad_reduction(reduction)


def _check_class_target(op: str, input: Tensor, target) -> None:
    """Class indices: integers of the input's shape without dim 1, each in [0, C)."""
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
    bad = target[(target < 0) | (target >= classes)]
    if bad.size:
        raise errors.class_target_range(op, int(bad[0]), classes)


def nll_loss(input: Tensor, target, *, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of the target classes: -input[n, target[n]], where
    ``input`` holds log-probabilities (N, C) (e.g. from ``log_softmax``) and ``target``
    the class indices (N,).

    >>> logp = log_softmax(ag.tensor([[2.0, 0.0]]), dim=1)
    >>> round(nll_loss(logp, ag.tensor([0])).item(), 4)
    0.1269
    """
    _check_reduction(reduction)
    input = _as_tensor(input)
    _check_class_target("nll_loss", input, target)
    return nn_ops.NLLLoss.apply(input, _constant(target), reduction=reduction)


def cross_entropy(input: Tensor, target, *, reduction: str = "mean") -> Tensor:
    """Cross-entropy of logits (N, C) against class indices (N,): log_softmax along
    the class axis (computed stably) followed by nll_loss.

    >>> round(cross_entropy(ag.tensor([[2.0, 0.0]]), ag.tensor([0])).item(), 4)
    0.1269
    """
    _check_reduction(reduction)
    input = _as_tensor(input)
    _check_class_target("cross_entropy", input, target)
    return nn_ops.NLLLoss.apply(log_softmax(input, dim=1), _constant(target),
                                reduction=reduction)


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
