"""Messages of the optimizers (optim/optimizer.py, optim/sgd.py, optim/adam.py), with
PyTorch's key phrases ("can only optimize Tensors", "Invalid learning rate")."""

from __future__ import annotations

from ._text import error, shape_text


def empty_parameters(optimizer: str) -> ValueError:
    """An optimizer built over no parameters."""
    return error(ValueError, f"{optimizer} got an empty parameter list.",
                 "pass model.parameters() of a model that has parameters.")


def not_a_tensor_parameter(optimizer: str, value) -> TypeError:
    """An optimizer given something that is not a Tensor to optimize."""
    return error(TypeError, f"{optimizer} can only optimize Tensors, but one of the params is "
                 f"{type(value).__name__}.", f"{optimizer} expects tensors to optimize: pass "
                 "model.parameters(), or a list of tensors created with requires_grad=True.")


def params_not_iterable(optimizer: str, shape) -> TypeError:
    """An optimizer given one tensor instead of an iterable of tensors (PyTorch refuses)."""
    return error(TypeError, f"{optimizer}: params argument given to the optimizer should be an "
                 f"iterable of Tensors or dicts, but got a Tensor of shape {shape_text(shape)}.",
                 f"wrap it in a list: {optimizer}([w], lr=...).")


def not_a_leaf_parameter(optimizer: str, shape) -> ValueError:
    """An optimizer given a computed tensor instead of a parameter."""
    return error(ValueError, f"{optimizer}: can't optimize a non-leaf Tensor (got a computed "
                 f"tensor of shape {shape_text(shape)}).", "pass leaf tensors, the parameters "
                 "themselves (model.parameters()), not results of ops.")


def bad_optimizer_option(optimizer: str, what: str, value, expected: str) -> ValueError:
    """An optimizer option out of range; ``what`` is PyTorch's name for it
    ("learning rate", "epsilon value", "beta parameter at index 0"...)."""
    return error(ValueError, f"{optimizer}: Invalid {what}: {value!r}.", f"use {expected}.")


def nesterov_options(optimizer: str) -> ValueError:
    """nesterov=True without momentum, or with dampening."""
    return error(ValueError, f"{optimizer}: Nesterov momentum requires a momentum and zero "
                 "dampening.", "pass momentum > 0 and dampening=0, or nesterov=False.")


def optimizer_state(optimizer: str, detail: str) -> ValueError:
    """load_state_dict with a state from another optimizer or other parameters."""
    return error(ValueError, f"{optimizer}.load_state_dict: {detail}.", "load a state_dict "
                 "saved from the same optimizer over the same parameters.")


def parameter_in_two_groups(optimizer: str) -> ValueError:
    """A parameter given to two parameter groups of one optimizer."""
    return error(ValueError, f"{optimizer}: some parameters appear in more than one parameter "
                 "group.", "give each parameter to exactly one group, e.g. "
                 "[{'params': body}, {'params': head, 'lr': 1e-2}] with no tensor in both.")


def duplicate_parameters(optimizer: str) -> UserWarning:
    """A parameter listed twice in one group (PyTorch warns and keeps both listings)."""
    return error(UserWarning, f"{optimizer}: optimizer contains a parameter group with "
                 "duplicate parameters; each step updates such a parameter once per "
                 "listing (twice for [p, p]), as PyTorch does.", "list each parameter "
                 "once: model.parameters() already gives a shared parameter only once.")
