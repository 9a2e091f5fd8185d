"""Messages of what a model file and its training script ported from PyTorch touch:
devices, ``.to``, sorting and sampling (topk, sort, argsort, roll, multinomial,
randint, from_numpy), the containers (ModuleList, ModuleDict, ParameterList),
``clip_grad_norm_``, ``save`` and ``load``; and what the model files of
tests/engine/ported/ touch: ``x += y``, ``.data =``, ``t()``, adaptive pooling, kaiming
init modes, the loss modules and the LSTM.

Raised from: nn/containers.py, nn/functional.py, nn/init.py, nn/loss.py, nn/rnn.py,
nn/utils.py, ops/api.py, recording/creation.py, recording/device.py,
recording/grad_mode.py, recording/tensor.py, serialization.py, tensor_methods.py.
"""

from __future__ import annotations

import numpy as np

from ._text import error


def cpu_only(device) -> RuntimeError:
    """A device other than the CPU (``"cuda"``, ``"mps"``, a typo)."""
    return error(RuntimeError, f"the engine runs on the CPU only, so it cannot use device "
                 f"{device!r}.", "use device='cpu' (or leave device out).")


def not_a_device(value) -> TypeError:
    """Something that is neither a device string nor a device object."""
    return error(TypeError, f"a device is 'cpu' or autograd_core.device('cpu'), got "
                 f"{type(value).__name__} {value!r}.", "use device='cpu'.")


def bad_to_arguments(args: tuple) -> TypeError:
    """``.to`` called with something that is not a dtype, a device or a tensor."""
    shown = ", ".join(repr(a) for a in args)
    return error(TypeError, f"to() takes a dtype, a device, a device and a dtype, or a "
                 f"tensor, got to({shown}).",
                 "write .to(autograd_core.float64), .to('cpu') or .to('cpu', float32).")


def topk_k(k, size: int) -> RuntimeError:
    """topk's k outside 0..size of the dim."""
    return error(RuntimeError, f"selected index k out of range: topk asked for k={k} "
                 f"entries along a dim of size {size}.", f"use 0 <= k <= {size}.")


def roll_arguments(shifts, dims) -> RuntimeError:
    """roll's shifts and dims of different lengths, or several shifts without dims."""
    return error(RuntimeError, f"roll needs one shift per dim: shifts={shifts!r}, "
                 f"dims={dims!r}.", "give as many shifts as dims, or one shift and no "
                 "dims (the flattened tensor is rolled).")


def multinomial_input(problem: str) -> RuntimeError:
    """multinomial's weights: the wrong number of dims, negative, inf/nan, all zero."""
    return error(RuntimeError, f"multinomial: {problem}.",
                 "pass a 1-D or 2-D tensor of non-negative, finite weights with a "
                 "positive sum in every row.")


def multinomial_samples(num_samples, categories: int, replacement: bool) -> RuntimeError:
    """num_samples not positive, or more than there are categories to draw without
    replacement."""
    if replacement or not isinstance(num_samples, int) or num_samples <= 0:
        return RuntimeError(f"multinomial: num_samples must be a positive int, got "
                            f"{num_samples!r}.")
    return error(RuntimeError, f"multinomial: cannot draw {num_samples} samples from "
                 f"{categories} categories with a non-zero weight without replacement.",
                 "set replacement=True, or draw fewer samples.")


def randint_arguments(args: tuple, problem: str) -> TypeError:
    """randint called with neither (high, size) nor (low, high, size)."""
    return error(TypeError, f"randint{args!r}: {problem}.",
                 "write randint(high, size) or randint(low, high, size), size a tuple "
                 "such as (3,) or (2, 4).")


def from_numpy_type(value) -> TypeError:
    """from_numpy of something that is not a NumPy array of numbers."""
    return error(TypeError, f"from_numpy expects a NumPy array of numbers, got "
                 f"{type(value).__name__}.", "for lists use autograd_core.tensor(data).")


def container_index(kind: str, index, length: int) -> IndexError:
    """ModuleList[i] / ParameterList[i] past either end."""
    return IndexError(f"index {index} is out of range for a {kind} of {length} entries.")


def container_index_type(kind: str, index) -> TypeError:
    """A ModuleList or ParameterList indexed by something that is not an int or slice."""
    return error(TypeError, f"{kind} indices must be integers or slices, not "
                 f"{type(index).__name__}.", "use layers[0], layers[-1] or layers[1:].")


def container_entry(kind: str, value, expected: str) -> TypeError:
    """Something that does not belong in a container (a function in a ModuleList)."""
    return error(TypeError, f"{kind} holds {expected}, got {type(value).__name__}.",
                 "wrap a function in an nn.Module subclass, a tensor in nn.Parameter.")


def module_dict_key(key) -> KeyError:
    """A ModuleDict read at a key it does not hold."""
    return KeyError(f"{key!r} is not a key of this ModuleDict.")


def bad_norm_type(norm_type) -> ValueError:
    """clip_grad_norm_ with a norm_type that is not a positive number or inf."""
    return error(ValueError, f"clip_grad_norm_: norm_type must be a positive number or "
                 f"inf, got {norm_type!r}.", "use norm_type=2.0 (the default) or "
                 "float('inf').")


def nonfinite_norm(norm_type) -> RuntimeError:
    """clip_grad_norm_(error_if_nonfinite=True) with a nan or inf total norm (PyTorch's
    wording)."""
    return RuntimeError(f"The total norm of order {float(norm_type)} for gradients from "
                        "`parameters` is non-finite, so it cannot be clipped. To disable "
                        "this error and scale the gradients by the non-finite norm anyway, "
                        "set `error_if_nonfinite=False`")


def save_object(value) -> TypeError:
    """save of something that is not a mapping of names to tensors."""
    return error(TypeError, f"save writes a state dict (names to tensors), got "
                 f"{type(value).__name__}.", "save model.state_dict().")


def save_entry(key, value) -> TypeError:
    """save of a state dict with a key that is not a string or a value that is not a
    tensor of numbers."""
    return error(TypeError, f"save: the entry {key!r} is {type(value).__name__}; a state "
                 "dict maps strings to tensors of numbers.", "save model.state_dict().")


def damaged_file(source, why: str) -> ValueError:
    """load of a file that is not a state dict this engine saved, or is damaged."""
    return error(ValueError, f"load: {source!r} is not a state dict saved by "
                 f"autograd_core.save, or it is damaged ({why}).",
                 "save it again with autograd_core.save(model.state_dict(), path).")


def grad_mode_argument(mode: str, value) -> TypeError:
    """no_grad(x) / enable_grad(x) with something that is not a function to decorate."""
    return error(TypeError, f"{mode}() takes no argument but a function to decorate, got "
                 f"{type(value).__name__}.", f"write 'with {mode}():' or put @{mode} above "
                 "a def.")


def data_not_a_tensor(value) -> TypeError:
    """``p.data = value`` with something other than a Tensor (PyTorch's TypeError)."""
    return error(TypeError, f"cannot set .data to a {type(value).__name__}: it takes a "
                 "Tensor.", "wrap the values first: p.data = torch.tensor(values), or "
                 "change them in place: p.data.copy_(values).")


def t_dims(shape: tuple) -> RuntimeError:
    """``x.t()`` of a tensor of more than 2 dims (PyTorch's RuntimeError)."""
    return error(RuntimeError, f"t() expects a tensor with <= 2 dimensions, but self is "
                 f"{len(shape)}D (shape {tuple(shape)}).",
                 "swap the two dims you mean: x.transpose(dim0, dim1).")


def adaptive_pool_input(shape: tuple) -> ValueError:
    """adaptive_avg_pool2d of a tensor that is not (C, H, W) or (N, C, H, W)."""
    return error(ValueError, f"adaptive_avg_pool2d: expected a 3-D (C, H, W) or 4-D "
                 f"(N, C, H, W) input, got shape {tuple(shape)}.",
                 "add the missing batch or channel dim with unsqueeze.")


def adaptive_pool_size(value) -> ValueError:
    """An output_size that is not a positive int, None, or a pair of them."""
    return error(ValueError, f"adaptive_avg_pool2d: output_size={value!r} is not a size.",
                 "pass an int >= 1 or a pair (height, width) of them; None keeps the "
                 "input's size.")


def init_mode(mode) -> ValueError:
    """kaiming init with a mode other than 'fan_in' or 'fan_out' (PyTorch's ValueError)."""
    return error(ValueError, f"Mode {mode} not supported, please use one of fan_in, "
                 "fan_out.", "mode='fan_in' keeps the forward pass's variance, "
                 "mode='fan_out' the backward pass's.")


def loss_class_weights(name: str) -> NotImplementedError:
    """A loss module given class weights, which the engine's losses do not take."""
    return error(NotImplementedError, f"{name}: class weights (weight=...) are not "
                 "supported.", "drop weight=...; to weigh classes, use reduction='none' "
                 "and multiply each sample's loss by its class's weight before the mean.")


def rnn_option(name: str, option: str) -> NotImplementedError:
    """An RNN option the engine's recurrent layers do not have."""
    return error(NotImplementedError, f"{name}: {option} is not supported.",
                 "use the default for it (a one-directional LSTM without projection).")


def rnn_input(name: str, shape: tuple, expected: str) -> ValueError:
    """An LSTM input or state of the wrong shape."""
    return error(ValueError, f"{name}: got shape {tuple(shape)}, expected {expected}.",
                 "check batch_first and the sizes the layer was built with.")


def inplace_result_type(result, dtype) -> RuntimeError:
    """``x += y`` whose result has a kind of dtype ``x`` cannot hold (float into int)."""
    return error(RuntimeError, f"result type {np.dtype(result).name} can't be cast to the "
                 f"desired output type {np.dtype(dtype).name}: x += y changes x in place, "
                 "in its own dtype.", "write x = x + y for a new tensor of the wider dtype, "
                 "or convert first: x = x.to(torch.float32).")
