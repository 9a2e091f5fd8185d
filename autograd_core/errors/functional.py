"""Messages of nn.functional (nn/functional.py, nn/layers.py): convolution, pooling,
normalisation, dropout, embedding, linear and the losses. Layer inputs are written as
PyTorch writes them, ``[N, C, H, W]``.

Raised from: nn/functional.py, nn/layers.py, nn/multihead_attention.py, nn/rnn.py.
"""

from __future__ import annotations

from ._text import error, shape_text, size_text

_IMAGE_LAYOUT = ("images are laid out (N, C, H, W): batch, channels, height, width; add a "
                 "batch axis to a single image with x.unsqueeze(0).")


# -- convolution and pooling ----------------------------------------------------------------
def layer_input_rank(op: str, expected: str, shape) -> RuntimeError:
    """An image layer given an input with too few or too many axes."""
    return error(RuntimeError, f"Expected {expected} input to {op}, but got input of size: "
                 f"{size_text(shape)}.", _IMAGE_LAYOUT)


def conv_weight_rank(shape) -> RuntimeError:
    """conv2d with a weight that is not 4-D."""
    return error(RuntimeError, "conv2d: weight should have 4 dimensions (out_channels, "
                 "in_channels / groups, kH, kW), but got weight of size "
                 f"{size_text(shape)}.", "a 3x3 kernel from 3 to 8 channels has shape "
                 "(8, 3, 3, 3).")


def conv_channels(groups: int, weight_shape, input_shape, expected: int) -> RuntimeError:
    """conv2d: the input's channels are not what the weight expects."""
    return error(
        RuntimeError,
        f"Given groups={groups}, weight of size {size_text(weight_shape)}, expected "
        f"input{size_text(input_shape)} to have {expected} channels, but got "
        f"{input_shape[-3]} channels instead.",
        "weight.shape[1] * groups must equal the input's channel count (dim 1 of "
        "(N, C, H, W)); check in_channels of the layer or the output of the layer before.")


def conv_groups(groups: int, weight_shape) -> RuntimeError:
    """conv2d: out_channels is not a multiple of groups."""
    return error(RuntimeError, f"Given groups={groups}, expected weight to be divisible by "
                 f"{groups} at dimension 0, but got weight of size {size_text(weight_shape)} "
                 "instead.", "out_channels (and in_channels) must be multiples of groups.")


def conv_bias(weight_shape, bias_shape) -> RuntimeError:
    """conv2d: the bias does not hold one value per output channel."""
    return error(RuntimeError,
                 f"Given weight of size {size_text(weight_shape)}, expected bias to be "
                 f"1-dimensional with {weight_shape[0]} elements, but got bias of size "
                 f"{size_text(bias_shape)} instead.",
                 "one bias per output channel: shape (out_channels,).")


def kernel_too_large(op: str, padded, kernel) -> RuntimeError:
    """A convolution or pooling window larger than the padded input."""
    return error(RuntimeError, f"{op}: Calculated padded input size per channel: ({padded[0]} "
                 f"x {padded[1]}). Kernel size: ({kernel[0]} x {kernel[1]}). Kernel size "
                 "can't be greater than actual input size.", "use a smaller kernel (or "
                 "dilation), more padding, or a larger input.")


def not_positive(op: str, what: str, value) -> RuntimeError:
    """A stride, kernel size or dilation that is 0 or negative."""
    return error(RuntimeError, f"{op}: non-positive {what} is not supported, got "
                 f"{what}={value}.", f"{what} must be a positive int or a pair of positive "
                 "ints, e.g. 1 or (2, 2).")


def negative_padding(op: str, value) -> RuntimeError:
    """A negative padding."""
    return error(RuntimeError, f"{op}: negative padding is not supported, got "
                 f"padding={value}.", "padding is the number of zeros added on each side: 0 "
                 "or more.")


def pool_padding(op: str, padding, kernel) -> RuntimeError:
    """Pooling with more padding than half the window."""
    return error(RuntimeError, f"{op}: pad should be at most half of effective kernel size, "
                 f"but got pad={padding}, kernel_size={kernel}.", "with more padding some "
                 "windows would hold no input value at all.")


def pair_argument(op: str, name: str, value) -> TypeError:
    """A size argument that is neither an int nor a pair of ints."""
    return error(TypeError, f"{op}: {name} must be an int or a pair of ints (height, width), "
                 f"got {value!r}.", f"e.g. {name}=1 or {name}=(1, 2).")


def padding_string(value, error_type: type = RuntimeError) -> Exception:
    """conv2d's padding given as a string other than 'valid' or 'same' (the function
    raises a RuntimeError, the Conv2d module a ValueError, as in PyTorch)."""
    return error(error_type, f"Invalid padding string {value!r}, should be one of "
                 "{'same', 'valid'}.", "'valid' means no padding; 'same' pads so that the "
                 "output has the input's height and width; or give an int or a pair.")


def same_padding_strided(error_type: type = RuntimeError) -> Exception:
    """padding='same' with a stride other than 1 (the output cannot keep the input's
    size)."""
    return error(error_type, "padding='same' is not supported for strided convolutions.",
                 "use stride=1 with padding='same', or give the padding as an int or a "
                 "pair.")


def pair_length(op: str, name: str, value) -> RuntimeError:
    """A size argument given as a tuple of neither 1 nor 2 values (PyTorch's wording:
    conv2d's, or the pools')."""
    if op == "conv2d":
        message = (f"expected {name} to be a single integer value or a list of 2 values to "
                   f"match the convolution dimensions, but got {name}={list(value)}.")
    else:
        omitted = "omitted, " if name == "stride" else ""
        message = (f"{op}: {name} must either be {omitted}a single int, or a tuple of two "
                   f"ints, got {tuple(value)}.")
    return error(RuntimeError, message, f"one value for both axes or a (height, width) pair, "
                 f"e.g. {name}=1 or {name}=(1, 2).")


# -- normalisation, dropout, embedding, linear ----------------------------------------------
def layer_weight_length(op: str, name: str, expected: int, got) -> RuntimeError:
    """A per-channel weight or bias of the wrong length."""
    return error(RuntimeError, f"{op}: {name} should contain {expected} elements not {got}.",
                 f"{name} holds one value per channel (dim 1 of the input), here {expected}.")


def batch_norm_single_value(shape) -> ValueError:
    """Batch norm in training mode over a batch with one value per channel."""
    return error(ValueError, "Expected more than 1 value per channel when training, got "
                 f"input size {size_text(shape)}.", "batch statistics need at least two "
                 "values per channel: use a batch of 2 or more, or call model.eval() to "
                 "normalise with the running estimates.")


def batch_norm_no_running_stats() -> RuntimeError:
    """Batch norm in evaluation mode without running estimates."""
    return error(RuntimeError,
                 "batch_norm: running_mean and running_var must be defined in evaluation mode.",
                 "pass the running estimates, or use training=True to normalise with the "
                 "batch's own statistics.")


def dropout_probability(p) -> ValueError:
    """A dropout probability outside [0, 1]."""
    return error(ValueError, f"dropout probability has to be between 0 and 1, but got {p}.",
                 "p is the probability of zeroing an element, e.g. 0.5.")


def embedding_weight_rank(shape) -> RuntimeError:
    """An embedding table that is not 2-D."""
    return error(RuntimeError, "embedding: 'weight' must be 2-D (num_embeddings, "
                 f"embedding_dim), got shape {shape_text(shape)}.", "one row per index, e.g. "
                 "a table of shape (vocabulary size, vector size).")


def embedding_indices_dtype(dtype) -> RuntimeError:
    """Embedding indices that are not integers."""
    return error(RuntimeError, f"embedding: expected integer indices, got {dtype}.",
                 "indices pick rows of the table; convert them with .astype(int64).")


def embedding_index_range(low: int, high: int, rows: int) -> IndexError:
    """Embedding indices outside the table."""
    return error(IndexError, f"embedding: index out of range: indices span [{low}, {high}] "
                 f"but the table has {rows} rows (valid indices 0 to {rows - 1}).",
                 "num_embeddings must be larger than the largest index (vocabulary size).")


def linear_shapes(input_shape, weight_shape) -> RuntimeError:
    """linear: the input's last size is not the weight's in_features."""
    features = input_shape[-1] if input_shape else 1
    return error(RuntimeError, f"linear: input of shape {shape_text(input_shape)} has "
                 f"{features} features but weight of shape {shape_text(weight_shape)} expects "
                 f"in_features={weight_shape[-1]}.", "weight is laid out (out_features, "
                 "in_features), as in PyTorch; the input's last size must equal in_features.")


# -- losses ---------------------------------------------------------------------------------
def bad_reduction(reduction) -> ValueError:
    """A loss's reduction that is not 'mean', 'sum' or 'none'."""
    return error(ValueError, f"{reduction} is not a valid value for reduction.",
                 "use 'mean' (the default), 'sum' or 'none'.")


def class_input_rank(op: str, shape) -> RuntimeError:
    """A classification loss given scores that are not (N, C, ...)."""
    return error(RuntimeError, f"{op}: expected input of shape (N, C) or (N, C, d1, ...), got "
                 f"{shape_text(shape)}.", "one row of C class scores per sample; add a batch "
                 "axis with x.unsqueeze(0).")


def class_target_dtype(op: str, dtype) -> RuntimeError:
    """A classification loss given a real-valued target."""
    return error(RuntimeError, f"{op}: expected class indices (an integer target), but got "
                 f"target of dtype {dtype}.", "the target holds the correct class of each "
                 "sample as an integer 0..C-1; convert it with .astype(int64) (or use mse_loss "
                 "/ binary_cross_entropy_with_logits for real-valued targets).")


def loss_option_type(op: str, name: str, expected: str, value) -> TypeError:
    """A classification loss option of the wrong type (ignore_index, label_smoothing)."""
    return error(TypeError, f"{op}(): argument '{name}' must be {expected}, not "
                 f"{type(value).__name__}.", f"pass {name} as {expected}, e.g. "
                 + ("ignore_index=-100 (the default)." if name == "ignore_index"
                    else "label_smoothing=0.1."))


def label_smoothing_range(value) -> RuntimeError:
    """cross_entropy's label_smoothing outside [0, 1] (PyTorch refuses > 1; this also
    refuses < 0 and nan, which PyTorch computes with)."""
    return error(RuntimeError, f"label_smoothing must be between 0.0 and 1.0. Got: {value}",
                 "label_smoothing=ε mixes the one-hot target with the uniform distribution "
                 "as (1 - ε) · one_hot + ε / C: use 0 (off) to 1; 0.1 is usual.")


def class_target_range(op: str, value: int, classes: int) -> IndexError:
    """A class index outside 0..C-1."""
    return error(IndexError, f"Target {value} is out of bounds. {op}: the input has {classes} "
                 f"classes, so class indices must lie in [0, {classes - 1}].", "the number of "
                 "outputs of the last layer must be the number of classes.")


def class_target_shape(op: str, input_shape, target_shape, expected) -> ValueError:
    """A class target whose shape is not the input's without the class axis."""
    return error(ValueError, f"{op}: expected a class target of shape {shape_text(expected)} "
                 f"for input of shape {shape_text(input_shape)}, got "
                 f"{shape_text(target_shape)}.", "the target has the input's shape without "
                 "the class axis (dim 1).")


def target_batch_size(input_shape, target_shape) -> ValueError:
    """A class target with another batch size than the input."""
    target_batch = target_shape[0] if target_shape else "none, a scalar"
    return error(ValueError, f"Expected input batch_size ({input_shape[0]}) to match target "
                 f"batch_size ({target_batch}): input {shape_text(input_shape)}, target "
                 f"{shape_text(target_shape)}.", "logits are (N, C) and the class target is "
                 "(N,): one class index per sample.")


def loss_target_shape(op: str, input_shape, target_shape) -> ValueError:
    """A regression loss whose target's shape differs from the prediction's."""
    return error(ValueError, f"{op}: Target size {shape_text(target_shape)} must be the same "
                 f"as input size {shape_text(input_shape)}.", "broadcasting them would "
                 "silently compare every prediction with every target; reshape one of them "
                 "(e.g. target.reshape(input.shape) or pred.squeeze(1)).")
