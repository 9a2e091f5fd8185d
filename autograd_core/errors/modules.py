"""Messages of nn.Module and the layers built on it (nn/module.py, nn/layers.py,
nn/blocks.py, nn/init.py): registering members, state_dict, options.

Raised from: nn/blocks.py, nn/init.py, nn/layers.py, nn/module.py.
"""

from __future__ import annotations

from ._text import error, shape_text


def no_forward(cls: str) -> NotImplementedError:
    """A Module subclass called without a forward method."""
    return error(NotImplementedError, f"{cls} defines no forward method.",
                 "write def forward(self, x): ... in your module.")


def init_not_called(cls: str, name: str) -> AttributeError:
    """A member assigned before ``super().__init__()``."""
    return error(AttributeError, f"cannot assign {name!r} before Module.__init__() call in "
                 f"{cls}.", "call super().__init__() first thing in your module's __init__.")


def bad_member_name(kind: str, name) -> KeyError:
    """A parameter, buffer or module name that is empty, not a string, or dotted."""
    return error(KeyError, f"{kind} name should be a non-empty string without '.', got "
                 f"{name!r}.", "dots separate the levels of a module path, e.g. "
                 "'block.conv1.weight'.")


def _cannot_assign(value, member: str, expected: str) -> str:
    return f"cannot assign '{type(value).__name__}' as {member} ({expected} expected)"


def not_a_parameter(name: str, value) -> TypeError:
    """Something that is not a Parameter assigned where a parameter is registered."""
    return error(TypeError, _cannot_assign(value, f"parameter {name!r}", "nn.Parameter or None")
                 + ".", "wrap the tensor: self.weight = nn.Parameter(tensor).")


def not_a_buffer(name: str, value) -> TypeError:
    """Something that is not a Tensor registered as a buffer."""
    return TypeError(_cannot_assign(value, f"buffer {name!r}", "a Tensor or None"))


def not_a_child_module(name: str, value) -> TypeError:
    """Something that is not a Module assigned where a child module is registered."""
    return TypeError(_cannot_assign(value, f"child module {name!r}", "Module or None"))


def not_a_module(value) -> TypeError:
    """add_module() of something that is not a Module."""
    return TypeError(f"{type(value).__name__} is not a Module subclass")


def missing_attribute(cls: str, name: str) -> AttributeError:
    """Python's own wording for an attribute a module does not have."""
    return AttributeError(f"'{cls}' object has no attribute {name!r}")


def state_dict_keys(cls: str, missing: list, unexpected: list) -> RuntimeError:
    """load_state_dict(strict=True) with keys that do not match the module's."""
    parts = []
    if missing:
        parts.append("Missing key(s) in state_dict: " + ", ".join(map(repr, missing)) + ".")
    if unexpected:
        parts.append("Unexpected key(s) in state_dict: " + ", ".join(map(repr, unexpected))
                     + ".")
    return error(RuntimeError, f"Error(s) in loading state_dict for {cls}:\n  "
                 + "\n  ".join(parts), "the state_dict must come from a module with the same "
                 "structure; pass strict=False to load only the keys both have.")


def state_dict_shape(key: str, given, expected) -> RuntimeError:
    """load_state_dict with a tensor of another shape than the module's."""
    return error(RuntimeError, f"size mismatch for {key}: copying a param with shape "
                 f"{shape_text(given)} from checkpoint, the shape in current model is "
                 f"{shape_text(expected)}.", "build the module with the same sizes as the "
                 "one that was saved.")


def sequential_index(index: int, length: int) -> IndexError:
    """Sequential[i] past either end."""
    return IndexError(f"index {index} is out of range for a Sequential of {length} modules.")


def sequential_index_type(index) -> TypeError:
    """A Sequential indexed by something that is neither an int nor a slice."""
    return error(TypeError, f"'{type(index).__name__}' object cannot be interpreted as an "
                 "integer (Sequential indices are ints or slices).",
                 "use model[0], model[-1] or model[1:]; to reach a child by name, "
                 "getattr(model, name).")


def training_mode(mode) -> ValueError:
    """train(mode) with a mode that is not a bool (``train("no")`` would mean True)."""
    return error(ValueError, f"training mode is expected to be boolean, got {mode!r}.",
                 "call model.train() or model.train(False), or model.eval().")


def bad_option(owner: str, name: str, value, expected: str) -> ValueError:
    """A layer's or optimizer's option outside its valid values."""
    return ValueError(f"{owner}: invalid {name}: {value!r} (expected {expected}).")


def fan_needs_matrix(shape) -> ValueError:
    """nn.init's fan in/out of a weight with fewer than 2 dimensions."""
    return ValueError("fan in and fan out need a weight with at least 2 dimensions, got "
                      f"shape {tuple(shape)}.")


def unknown_nonlinearity(nonlinearity) -> ValueError:
    """nn.init.calculate_gain of a nonlinearity it has no gain for."""
    return ValueError(f"unsupported nonlinearity {nonlinearity!r}")
