"""Messages of the optimizers (optim/optimizer.py, optim/sgd.py, optim/adam.py); their
options are checked with ``bad_option`` from the modules family."""

from __future__ import annotations

from ._text import error, shape_text


def empty_parameters(optimizer: str) -> ValueError:
    """An optimizer built over no parameters."""
    return error(ValueError, f"{optimizer} got an empty parameter list.",
                 "pass model.parameters() of a model that has parameters.")


def not_a_tensor_parameter(optimizer: str, value) -> TypeError:
    """An optimizer given something that is not a Tensor to optimize."""
    return TypeError(f"{optimizer} expects tensors to optimize, got {type(value).__name__}.")


def not_a_leaf_parameter(optimizer: str, shape) -> ValueError:
    """An optimizer given a computed tensor instead of a parameter."""
    return error(ValueError, f"{optimizer} can only optimize leaf tensors, got a computed "
                 f"tensor of shape {shape_text(shape)}.", "pass the parameters themselves "
                 "(model.parameters()), not results of ops.")


def optimizer_state(optimizer: str, detail: str) -> ValueError:
    """load_state_dict with a state from another optimizer or other parameters."""
    return error(ValueError, f"{optimizer}.load_state_dict: {detail}.", "load a state_dict "
                 "saved from the same optimizer over the same parameters.")
