"""Every error message the engine can raise, in one place.

Messages follow PyTorch's wording where PyTorch has the same error (so a search
for the message finds useful answers), name the op and the shapes involved, and
end with one line that says how to fix it.
"""

from __future__ import annotations


class GradcheckError(AssertionError):
    """Raised by ``gradcheck`` when analytic and numeric gradients disagree."""


def _shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def second_backward(op: str) -> RuntimeError:
    return RuntimeError(
        "Trying to backward through the graph a second time (or directly access saved "
        "tensors after they have already been freed). Saved intermediate values of the "
        f"graph are freed when you call .backward(); {op} needs one of them.\n"
        "Hint: specify retain_graph=True on the first .backward() if you need to "
        "backward through the graph a second time."
    )


def no_grad_fn() -> RuntimeError:
    return RuntimeError(
        "element 0 of tensors does not require grad and does not have a grad_fn.\n"
        "Hint: create the inputs with requires_grad=True, and do not compute the output "
        "inside no_grad() if you want to call .backward() on it."
    )


def implicit_grad(shape) -> RuntimeError:
    return RuntimeError(
        f"grad can be implicitly created only for scalar outputs; this output has shape "
        f"{_shape(shape)}.\n"
        "Hint: reduce it to a scalar first (e.g. .sum()), or pass gradient= with the "
        "output's shape."
    )


def gradient_shape(given, expected) -> RuntimeError:
    return RuntimeError(
        f"Mismatch in shape: gradient has a shape of {_shape(given)} and output has a "
        f"shape of {_shape(expected)}.\n"
        "Hint: gradient= must have exactly the shape of the tensor you call .backward() on."
    )


def matmul_shapes(a, b) -> RuntimeError:
    return RuntimeError(
        f"matmul: shapes {_shape(a)} and {_shape(b)} cannot be multiplied "
        f"(inner sizes {a[-1]} and {b[-2] if len(b) > 1 else b[0]} differ).\n"
        "Hint: the last size of the left operand must equal the second-to-last size of "
        "the right one; a transpose (.T) is often what is missing."
    )


def broadcast(op: str, a, b) -> RuntimeError:
    detail = ""
    for offset in range(1, min(len(a), len(b)) + 1):
        sa, sb = a[-offset], b[-offset]
        if sa != sb and sa != 1 and sb != 1:
            dim = max(len(a), len(b)) - offset
            detail = (
                f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                f"non-singleton dimension {dim}."
            )
            break
    return RuntimeError(
        f"{op}: shapes {_shape(a)} and {_shape(b)} cannot be broadcast together. {detail}\n"
        "Hint: sizes are compared from the right; each pair must be equal or one of them 1."
    )


def modified_inplace(name: str, op: str, shape, dtype, version: int, expected: int):
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: the tensor {name!r} of shape {_shape(shape)} and dtype {dtype} "
        f"saved by {op} is at version {version}; expected version {expected} instead.\n"
        "Hint: do not modify a tensor in place between the forward pass and backward; "
        "use an out-of-place op or .clone() it first."
    )


def not_saved(op: str, name: str, saved: list) -> KeyError:
    return KeyError(
        f"the backward of {op} reads {name!r}, but its forward saved only {saved}.\n"
        f"Hint: call ctx.save({name}=...) in forward for every array backward reads."
    )


def inplace_leaf() -> RuntimeError:
    return RuntimeError(
        "a leaf Variable that requires grad is being used in an in-place operation.\n"
        "Hint: wrap the update in no_grad(), as optimizers do."
    )


def inplace_recorded() -> RuntimeError:
    return RuntimeError(
        "in-place operations on a tensor that is part of a recorded graph are not "
        "supported by this engine.\n"
        "Hint: use an out-of-place op (e.g. where(mask, a, b)), or .detach() the tensor."
    )


def non_float_grad(dtype) -> RuntimeError:
    return RuntimeError(
        f"only Tensors of floating point dtype can require gradients (got {dtype}).\n"
        "Hint: create the data as floats, e.g. tensor([1.0, 2.0]) or dtype=float64."
    )


def non_leaf_requires_grad() -> RuntimeError:
    return RuntimeError(
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach()."
    )


def bad_reshape(shape, size: int) -> RuntimeError:
    return RuntimeError(
        f"shape {list(shape)!r} is invalid for input of size {size}.\n"
        "Hint: the product of the new sizes must equal the number of elements; use -1 "
        "for one size to have it inferred."
    )


def dim_out_of_range(dim: int, ndim: int) -> IndexError:
    low, high = (-ndim, ndim - 1) if ndim > 0 else (-1, 0)
    return IndexError(
        f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim}).\n"
        f"Hint: this tensor has {ndim} dimension(s)."
    )


def ambiguous_bool(shape) -> RuntimeError:
    how_many = "no values" if 0 in shape else "more than one value"
    return RuntimeError(
        f"Boolean value of Tensor with {how_many} is ambiguous (shape "
        f"{_shape(shape)}).\nHint: use .any() or .all(), or compare a single element."
    )


def ragged(detail: str) -> ValueError:
    return ValueError(
        f"cannot make a tensor from ragged nested sequences: {detail}.\n"
        "Hint: every row must have the same length."
    )


def unsupported_data(kind: str) -> TypeError:
    return TypeError(
        f"cannot make a tensor from data of type {kind}; expected numbers (int, float, bool), "
        "nested lists of numbers or a numeric NumPy array."
    )


def not_a_tensor(op: str, value) -> TypeError:
    return TypeError(
        f"{op}: expected a Tensor, a NumPy array or a Python number, got "
        f"{type(value).__name__}."
    )


def item_of_many(shape) -> RuntimeError:
    size = 1
    for s in shape:
        size *= s
    return RuntimeError(
        f"a Tensor with {size} elements cannot be converted to a Python scalar (its shape "
        f"is {_shape(shape)}).\n"
        "Hint: .item() needs a tensor with exactly one element."
    )


def missing_backward(op: str) -> NotImplementedError:
    return NotImplementedError(f"the op {op!r} defines no backward rule, so it cannot be "
                               "differentiated.")


def new_dim_out_of_range(dim: int, ndim: int) -> IndexError:
    """For ops that insert an axis (unsqueeze, stack): ``dim`` names a position among
    the ``ndim + 1`` axes of the result, not an axis of the input."""
    return IndexError(
        f"Dimension out of range (expected to be in range of [{-ndim - 1}, {ndim}], but got "
        f"{dim}).\nHint: the input has {ndim} dimension(s) and the new axis can go at any of "
        f"the {ndim + 1} positions of the result."
    )


def where_condition(condition, values) -> RuntimeError:
    return RuntimeError(
        f"where: the condition of shape {_shape(condition)} cannot be broadcast against the "
        f"values of shape {_shape(values)}.\n"
        "Hint: the condition needs the values' shape, or a shape that broadcasts to it "
        "(sizes compared from the right, each equal or 1)."
    )


# -- nn.functional: convolution, pooling, normalisation, dropout, embedding, losses ---------
def _size(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def layer_input_rank(op: str, expected: str, shape) -> RuntimeError:
    return RuntimeError(
        f"Expected {expected} input to {op}, but got input of size: {_size(shape)}.\n"
        "Hint: images are laid out (N, C, H, W): batch, channels, height, width; add a "
        "batch axis to a single image with x.unsqueeze(0)."
    )


def conv_weight_rank(shape) -> RuntimeError:
    return RuntimeError(
        f"conv2d: weight should have 4 dimensions (out_channels, in_channels / groups, kH, kW), "
        f"but got weight of size {_size(shape)}.\n"
        "Hint: a 3x3 kernel from 3 to 8 channels has shape (8, 3, 3, 3)."
    )


def conv_channels(groups: int, weight_shape, input_shape, expected: int) -> RuntimeError:
    return RuntimeError(
        f"Given groups={groups}, weight of size {_size(weight_shape)}, expected "
        f"input{_size(input_shape)} to have {expected} channels, but got "
        f"{input_shape[-3]} channels instead.\n"
        "Hint: weight.shape[1] * groups must equal the input's channel count (dim 1 of "
        "(N, C, H, W)); check in_channels of the layer or the output of the layer before."
    )


def conv_groups(groups: int, weight_shape) -> RuntimeError:
    return RuntimeError(
        f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
        f"but got weight of size {_size(weight_shape)} instead.\n"
        "Hint: out_channels (and in_channels) must be multiples of groups."
    )


def conv_bias(weight_shape, bias_shape) -> RuntimeError:
    return RuntimeError(
        f"Given weight of size {_size(weight_shape)}, expected bias to be 1-dimensional with "
        f"{weight_shape[0]} elements, but got bias of size {_size(bias_shape)} instead.\n"
        "Hint: one bias per output channel: shape (out_channels,)."
    )


def kernel_too_large(op: str, padded, kernel) -> RuntimeError:
    return RuntimeError(
        f"{op}: Calculated padded input size per channel: ({padded[0]} x {padded[1]}). "
        f"Kernel size: ({kernel[0]} x {kernel[1]}). Kernel size can't be greater than actual "
        "input size.\n"
        "Hint: use a smaller kernel (or dilation), more padding, or a larger input."
    )


def not_positive(op: str, what: str, value) -> RuntimeError:
    return RuntimeError(
        f"{op}: non-positive {what} is not supported, got {what}={value}.\n"
        f"Hint: {what} must be a positive int or a pair of positive ints, e.g. 1 or (2, 2)."
    )


def negative_padding(op: str, value) -> RuntimeError:
    return RuntimeError(
        f"{op}: negative padding is not supported, got padding={value}.\n"
        "Hint: padding is the number of zeros added on each side: 0 or more."
    )


def pool_padding(op: str, padding, kernel) -> RuntimeError:
    return RuntimeError(
        f"{op}: pad should be at most half of effective kernel size, but got pad={padding}, "
        f"kernel_size={kernel}.\n"
        "Hint: with more padding some windows would hold no input value at all."
    )


def layer_weight_length(op: str, name: str, expected: int, got) -> RuntimeError:
    return RuntimeError(
        f"{op}: {name} should contain {expected} elements not {got}.\n"
        f"Hint: {name} holds one value per channel (dim 1 of the input), here {expected}."
    )


def batch_norm_single_value(shape) -> ValueError:
    return ValueError(
        "Expected more than 1 value per channel when training, got input size "
        f"{_size(shape)}.\n"
        "Hint: batch statistics need at least two values per channel: use a batch of 2 or "
        "more, or call model.eval() to normalise with the running estimates."
    )


def batch_norm_no_running_stats() -> RuntimeError:
    return RuntimeError(
        "batch_norm: running_mean and running_var must be defined in evaluation mode.\n"
        "Hint: pass the running estimates, or use training=True to normalise with the "
        "batch's own statistics."
    )


def dropout_probability(p) -> ValueError:
    return ValueError(
        f"dropout probability has to be between 0 and 1, but got {p}.\n"
        "Hint: p is the probability of zeroing an element, e.g. 0.5."
    )


def embedding_indices_dtype(dtype) -> RuntimeError:
    return RuntimeError(
        f"embedding: expected integer indices, got {dtype}.\n"
        "Hint: indices pick rows of the table; convert them with .astype(int64)."
    )


def embedding_index_range(low: int, high: int, rows: int) -> IndexError:
    return IndexError(
        f"embedding: index out of range: indices span [{low}, {high}] but the table has "
        f"{rows} rows (valid indices 0 to {rows - 1}).\n"
        "Hint: num_embeddings must be larger than the largest index (vocabulary size)."
    )


def linear_shapes(input_shape, weight_shape) -> RuntimeError:
    return RuntimeError(
        f"linear: input of shape {_shape(input_shape)} has {input_shape[-1] if input_shape else 1}"
        f" features but weight of shape {_shape(weight_shape)} expects in_features="
        f"{weight_shape[-1]}.\n"
        "Hint: weight is laid out (out_features, in_features), as in PyTorch; the input's "
        "last size must equal in_features."
    )


def bad_reduction(reduction) -> ValueError:
    return ValueError(
        f"{reduction} is not a valid value for reduction.\n"
        "Hint: use 'mean' (the default), 'sum' or 'none'."
    )


def class_target_dtype(op: str, dtype) -> RuntimeError:
    return RuntimeError(
        f"{op}: expected class indices (an integer target), but got target of dtype {dtype}.\n"
        "Hint: the target holds the correct class of each sample as an integer 0..C-1; "
        "convert it with .astype(int64) (or use mse_loss / binary_cross_entropy_with_logits "
        "for real-valued targets)."
    )


def class_target_range(op: str, value: int, classes: int) -> IndexError:
    return IndexError(
        f"Target {value} is out of bounds. {op}: the input has {classes} classes, so class "
        f"indices must lie in [0, {classes - 1}].\n"
        "Hint: the number of outputs of the last layer must be the number of classes."
    )


def target_batch_size(input_shape, target_shape) -> ValueError:
    return ValueError(
        f"Expected input batch_size ({input_shape[0]}) to match target batch_size "
        f"({target_shape[0] if target_shape else 'none, a scalar'}): input "
        f"{_shape(input_shape)}, target {_shape(target_shape)}.\n"
        "Hint: logits are (N, C) and the class target is (N,): one class index per sample."
    )


def class_input_rank(op: str, shape) -> RuntimeError:
    return RuntimeError(
        f"{op}: expected input of shape (N, C) or (N, C, d1, ...), got {_shape(shape)}.\n"
        "Hint: one row of C class scores per sample; add a batch axis with x.unsqueeze(0)."
    )


def loss_target_shape(op: str, input_shape, target_shape) -> ValueError:
    return ValueError(
        f"{op}: Target size {_shape(target_shape)} must be the same as input size "
        f"{_shape(input_shape)}.\n"
        "Hint: broadcasting them would silently compare every prediction with every target; "
        "reshape one of them (e.g. target.reshape(input.shape) or pred.squeeze(1))."
    )


def class_target_shape(op: str, input_shape, target_shape, expected) -> ValueError:
    return ValueError(
        f"{op}: expected a class target of shape {_shape(expected)} for input of shape "
        f"{_shape(input_shape)}, got {_shape(target_shape)}.\n"
        "Hint: the target has the input's shape without the class axis (dim 1)."
    )


def pair_argument(op: str, name: str, value) -> TypeError:
    return TypeError(
        f"{op}: {name} must be an int or a pair of ints (height, width), got {value!r}.\n"
        f"Hint: e.g. {name}=1 or {name}=(1, 2)."
    )


# -- forward mode and functional transforms (func.py) ------------------------------------
def missing_jvp(op: str) -> NotImplementedError:
    return NotImplementedError(
        f"the op {op!r} defines no forward-mode rule (jvp), so jvp/jacfwd cannot push a "
        "tangent through it.\n"
        "Hint: use reverse mode (vjp, jacrev) for this function, or add a "
        "jvp(ctx, *tangents) staticmethod beside the op's backward."
    )


def primals_tangents(transform: str, n_primals: int, n_tangents: int) -> RuntimeError:
    return RuntimeError(
        f"{transform}: expected one tangent per primal, got {n_primals} primal(s) and "
        f"{n_tangents} tangent(s).\n"
        "Hint: pass tuples of the same length, e.g. jvp(f, (x, y), (dx, dy))."
    )


def tangent_shape(transform: str, index: int, given, expected) -> RuntimeError:
    return RuntimeError(
        f"{transform}: Expected tangents[{index}] to have the shape of primals[{index}], "
        f"{_shape(expected)}, but got {_shape(given)}.\n"
        "Hint: a tangent is a direction in input space: it has exactly its primal's shape."
    )


def non_float_primal(transform: str, index: int, dtype) -> RuntimeError:
    return RuntimeError(
        f"{transform}: only floating point inputs can be differentiated, but input {index} "
        f"has dtype {dtype}.\n"
        "Hint: convert it first, e.g. tensor(data, dtype=float64)."
    )


def cotangent_shape(index: int, given, expected) -> RuntimeError:
    return RuntimeError(
        f"vjp: Mismatch in shape: cotangent {index} has a shape of {_shape(given)} and output "
        f"{index} has a shape of {_shape(expected)}.\n"
        "Hint: a cotangent weighs each output element: it has exactly the output's shape."
    )


def function_output(transform: str, kind: str) -> TypeError:
    return TypeError(
        f"{transform}: the function must return a Tensor or a tuple of Tensors, got {kind}.\n"
        "Hint: return the tensor itself, not .item() or .numpy() of it."
    )


def jacobian_mode(mode) -> ValueError:
    return ValueError(
        f"jacobian: mode must be 'forward' or 'reverse', got {mode!r}.\n"
        "Hint: 'forward' costs one JVP pass per input element, 'reverse' one VJP pass per "
        "output element: pick the smaller side."
    )


# -- checkpointing (utils/checkpoint.py) --------------------------------------------------
def checkpoint_output(kind: str) -> TypeError:
    return TypeError(
        f"checkpoint: the checkpointed function must return one Tensor, got {kind}.\n"
        "Hint: checkpoint each output's computation separately, or return one tensor."
    )


def checkpoint_segments(segments, n_modules: int) -> ValueError:
    return ValueError(
        f"checkpoint_sequential: segments must be between 1 and the number of modules "
        f"({n_modules}), got {segments}.\n"
        "Hint: about sqrt(number of layers) segments balances memory and recomputation."
    )


def checkpoint_generator(count: int) -> RuntimeError:
    return RuntimeError(
        f"checkpoint: the segment drew random numbers from {count} generator(s) whose state "
        "was not saved, so recomputing it in backward would draw different numbers (e.g. "
        "another dropout mask) and give wrong gradients.\n"
        "Hint: pass them with checkpoint(..., generators=[g]), or make them attributes "
        "(.generator) of the checkpointed module."
    )


# -- anomaly detection (anomaly.py) ---------------------------------------------------------
_ANOMALY_HINTS = {
    "sqrt": "sqrt has an infinite slope at 0 (its backward divides by 2*sqrt(a)); keep the "
            "input away from 0, e.g. sqrt(x + 1e-12).",
    "log": "log's backward divides by its input, so a 0 (or tiny) input gives inf; clamp it, "
           "e.g. log(x.clamp(min=1e-12)), or use log_softmax instead of log(softmax(x)).",
    "div": "a division's backward divides by the denominator (squared for the denominator's "
           "own gradient), so a denominator near 0 gives inf; add a small epsilon to it.",
    "pow": "a**b with b < 1 has an infinite slope at a = 0, and log(a) (for b's gradient) is "
           "undefined for a <= 0; keep the base positive.",
}


def anomaly(backward_name: str, op: str, kind: str, index: int, module,
            trace_lines: list[str]) -> RuntimeError:
    """``trace_lines``: the formatted frames of the forward call that created the node."""
    where = f"The op {op!r}" + (f" (in module {module!r})" if module else "")
    if trace_lines:
        origin = (f"{where} was created by this forward call (innermost last):\n"
                  + "".join(trace_lines).rstrip("\n"))
    else:
        origin = (f"{where} was created before anomaly detection was on, so its forward "
                  "line is unknown.")
    hint = _ANOMALY_HINTS.get(op, "look at the values this op received on the forward line "
                                  "above: a NaN in backward usually comes from inf * 0 or "
                                  "0 / 0 in its rule, an inf from a division by a value near "
                                  "0 or an overflowing exp.")
    return RuntimeError(
        f"Function '{backward_name}' returned {kind} values in its {index}th output.\n"
        f"{origin}\nHint: {hint}"
    )


def embedding_weight_rank(shape) -> RuntimeError:
    return RuntimeError(
        f"embedding: 'weight' must be 2-D (num_embeddings, embedding_dim), got shape "
        f"{_shape(shape)}.\n"
        "Hint: one row per index, e.g. a table of shape (vocabulary size, vector size)."
    )


# -- modules and optimizers ------------------------------------------------------------
def init_not_called(cls: str, name: str) -> AttributeError:
    return AttributeError(
        f"cannot assign {name!r} before Module.__init__() call in {cls}.\n"
        "Hint: call super().__init__() first thing in your module's __init__."
    )


def bad_member_name(kind: str, name) -> KeyError:
    return KeyError(
        f"{kind} name should be a non-empty string without '.', got {name!r}.\n"
        "Hint: dots separate the levels of a module path, e.g. 'block.conv1.weight'."
    )


def not_a_parameter(name: str, value) -> TypeError:
    return TypeError(
        f"cannot assign '{type(value).__name__}' as parameter {name!r} "
        "(nn.Parameter or None expected).\n"
        "Hint: wrap the tensor: self.weight = nn.Parameter(tensor)."
    )


def missing_attribute(cls: str, name: str) -> AttributeError:
    return AttributeError(f"'{cls}' object has no attribute {name!r}")


def state_dict_keys(cls: str, missing: list, unexpected: list) -> RuntimeError:
    parts = []
    if missing:
        parts.append("Missing key(s) in state_dict: " + ", ".join(map(repr, missing)) + ".")
    if unexpected:
        parts.append("Unexpected key(s) in state_dict: " + ", ".join(map(repr, unexpected))
                     + ".")
    return RuntimeError(
        f"Error(s) in loading state_dict for {cls}:\n  " + "\n  ".join(parts) + "\n"
        "Hint: the state_dict must come from a module with the same structure; "
        "pass strict=False to load only the keys both have."
    )


def state_dict_shape(key: str, given, expected) -> RuntimeError:
    return RuntimeError(
        f"size mismatch for {key}: copying a param with shape {_shape(given)} from "
        f"checkpoint, the shape in current model is {_shape(expected)}.\n"
        "Hint: build the module with the same sizes as the one that was saved."
    )


def sequential_index(index: int, length: int) -> IndexError:
    return IndexError(f"index {index} is out of range for a Sequential of {length} modules.")


def bad_option(owner: str, name: str, value, expected: str) -> ValueError:
    return ValueError(f"{owner}: invalid {name}: {value!r} (expected {expected}).")


def empty_parameters(optimizer: str) -> ValueError:
    return ValueError(
        f"{optimizer} got an empty parameter list.\n"
        "Hint: pass model.parameters() of a model that has parameters."
    )


def not_a_leaf_parameter(optimizer: str, shape) -> ValueError:
    return ValueError(
        f"{optimizer} can only optimize leaf tensors, got a computed tensor of shape "
        f"{_shape(shape)}.\n"
        "Hint: pass the parameters themselves (model.parameters()), not results of ops."
    )


def optimizer_state(optimizer: str, detail: str) -> ValueError:
    return ValueError(
        f"{optimizer}.load_state_dict: {detail}.\n"
        "Hint: load a state_dict saved from the same optimizer over the same parameters."
    )


# -- widgets (the presentation layer: graph pictures, stepper, tracer) ------------------
def renderer_missing() -> RuntimeError:
    return RuntimeError(
        "cannot draw the graph: the Graphviz renderer 'graphviz-pure' was not found "
        "(neither next to this Python nor on PATH).\n"
        "Hint: pip install graphviz-pure==0.2.2 (or pip install -e \".[widgets]\" in the "
        "project folder), then restart the kernel."
    )


def renderer_failed(code: int, stderr: str) -> RuntimeError:
    return RuntimeError(
        f"graphviz-pure could not lay out the graph (exit code {code}): {stderr.strip()}\n"
        "Hint: this is a bug in the DOT text widgets.render wrote; please report it with "
        "the program that built the graph."
    )


def view_needs_tensor(what: str, given, example: str) -> TypeError:
    return TypeError(
        f"{what} expects a Tensor that an autograd_core program computed, got "
        f"{type(given).__name__}.\n"
        f"Hint: pass the output of your forward pass, e.g. {example}."
    )


def view_needs_graph(what: str) -> ValueError:
    return ValueError(
        f"{what}: this tensor has no recorded graph (it does not require grad, or it was "
        "computed under no_grad()).\n"
        "Hint: create an input with requires_grad=True and compute the output outside "
        "no_grad()."
    )


def step_out_of_range(step: int, last: int) -> IndexError:
    return IndexError(
        f"step {step} is out of range: this sweep has steps 0 (before the first node) to "
        f"{last}.\nHint: use stepper.first(), .next(), .previous(), .last(), or a step in "
        f"0..{last}."
    )


def step_input(names: list, given) -> ValueError:
    return ValueError(
        f"this step sends gradients to the inputs {names}, not to {given!r}.\n"
        "Hint: pass one of those names, or an index into that list."
    )


def unreadable_answer(text: str, reason: str) -> ValueError:
    return ValueError(
        f"could not read {text!r} as a number or an array: {reason}.\n"
        "Hint: type a Python literal such as 0.5, [1.0, -2.0] or [[1, 2], [3, 4]]."
    )
