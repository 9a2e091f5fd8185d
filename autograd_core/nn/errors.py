"""Error messages of modules and optimizers, in one place.

Like ``autograd_core.errors``: PyTorch's wording where PyTorch has the same error,
the names and shapes involved, and one line that says how to fix it.
"""

from __future__ import annotations


def _shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


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
