"""Messages of the optimizers (optim/optimizer.py, optim/sgd.py, optim/adam.py) and of the
learning-rate schedulers (optim/lr_scheduler.py), with PyTorch's key phrases ("can only
optimize Tensors", "Invalid learning rate", "is not an Optimizer").

Raised from: optim/adadelta.py, optim/adam.py, optim/lr_scheduler.py, optim/optimizer.py,
optim/sgd.py.
"""

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


# -- learning-rate schedulers (optim/lr_scheduler.py) -------------------------------------------
def not_an_optimizer(value) -> TypeError:
    """A scheduler given something that is not an optimizer."""
    return error(TypeError, f"{type(value).__name__} is not an Optimizer",
                 "pass the optimizer whose learning rates the schedule sets, e.g. "
                 "LinearLR(opt, ...) with opt = optim.SGD(model.parameters(), lr=0.1).")


def missing_initial_lr(index: int) -> KeyError:
    """A scheduler resumed (last_epoch >= 0) over groups that no scheduler has seen."""
    return error(KeyError, f"param 'initial_lr' is not specified in param_groups[{index}] when "
                 "resuming scheduler with last_epoch >= 0.", "for a fresh run keep "
                 "last_epoch=-1 (the default); to resume, load the optimizer's state_dict "
                 "saved with the scheduler first.")


def lr_lambda_count(groups: int, given: int) -> ValueError:
    """LambdaLR given a list of functions that does not match the parameter groups."""
    return error(ValueError, f"Expected {groups} lr_lambdas, but got {given}.",
                 "give one function per parameter group, or a single function for all.")


def not_callable(scheduler: str, what: str, value) -> TypeError:
    """A schedule function that cannot be called."""
    return error(TypeError, f"{scheduler}: {what} must be callable (epoch -> factor), but got "
                 f"{type(value).__name__}.", "pass e.g. lambda epoch: 0.95 ** epoch.")


def linear_factor(which: str) -> ValueError:
    """LinearLR's start_factor outside (0, 1] or end_factor outside [0, 1]."""
    if which == "start":
        return error(ValueError, "Starting multiplicative factor expected to be greater than 0 "
                     "and less or equal to 1.", "start_factor multiplies the initial lr at "
                     "the first step: use e.g. 1/3 or 0.01.")
    return error(ValueError, "Ending multiplicative factor expected to be between 0 and 1.",
                 "end_factor multiplies the initial lr after total_iters steps: use e.g. 1.0.")


def cosine_T_max(value) -> ZeroDivisionError:
    """CosineAnnealingLR over a period of 0 steps (PyTorch divides by zero at step())."""
    return error(ZeroDivisionError, f"CosineAnnealingLR: T_max={value!r} is a cosine period of "
                 "no steps: the schedule divides by T_max.", "T_max is the number of steps "
                 "from the initial lr down to eta_min, e.g. the number of training steps.")


def step_size(value) -> ValueError:
    """StepLR given a step_size that is not a whole number >= 1."""
    return error(ValueError, f"StepLR: step_size={value!r} is not a number of steps.",
                 "pass a whole number >= 1: the lr is multiplied by gamma every step_size "
                 "steps.")


def sequential_schedulers(detail: str) -> ValueError:
    """SequentialLR given schedulers and milestones that do not fit together."""
    return error(ValueError, f"SequentialLR {detail}", "e.g. SequentialLR(opt, [warmup, "
                 "cosine], milestones=[warmup_steps]), both schedulers built over opt.")


def sequential_not_a_scheduler(index: int, value) -> TypeError:
    """SequentialLR given something that is not a scheduler."""
    return error(TypeError, f"SequentialLR at index {index} should have `optimizer` as its "
                 f"attribute (got {type(value).__name__}).", "pass learning-rate schedulers "
                 "(LinearLR, CosineAnnealingLR...) built over the same optimizer.")


def scheduler_before_optimizer() -> UserWarning:
    """lr_scheduler.step() called before any optimizer.step() (PyTorch warns)."""
    return error(UserWarning, "Detected call of `lr_scheduler.step()` before "
                 "`optimizer.step()`: the first value of the learning rate schedule is then "
                 "skipped.", "call optimizer.step() first, then lr_scheduler.step(), at the "
                 "end of each training step.")


def get_lr_outside_step() -> UserWarning:
    """get_lr() called by the user (it computes the next lr, PyTorch warns)."""
    return error(UserWarning, "To get the last learning rate computed by the scheduler, please "
                 "use `get_last_lr()`.", "get_lr() computes the next value from the current "
                 "one; step() calls it.")


def warmup_schedule(detail: str, kind: type = ValueError) -> Exception:
    """cosine_with_warmup given steps or a min_lr that make no schedule."""
    return error(kind, f"cosine_with_warmup: {detail}", "e.g. cosine_with_warmup(opt, "
                 "warmup_steps=100, total_steps=1000, min_lr=1e-5): 0 <= warmup_steps <= "
                 "total_steps and 0 <= min_lr <= each group's lr.")
