"""Messages of the reverse sweep (sweep/engine.py, recording/node.py, tools/graph.py):
starting it, the saved tensors it reads, and tensors changed in place under it.

Raised from: recording/node.py, recording/rule.py, sweep/engine.py, sweep/grad.py,
tools/graph.py.
"""

from __future__ import annotations

from ._text import error, shape_text


class CycleError(ValueError):
    """Raised when a graph given as data has a cycle, so no topological order exists."""


def second_backward(op: str) -> RuntimeError:
    """A node's saved tensors were released by an earlier backward."""
    return error(
        RuntimeError,
        "Trying to backward through the graph a second time (or directly access saved "
        "tensors after they have already been freed). Saved intermediate values of the "
        f"graph are freed when you call .backward(); {op} needs one of them. Specify "
        "retain_graph=True if you need to backward through the graph a second time or if "
        "you need to access saved tensors after calling backward.",
        "pass retain_graph=True to the first .backward(), or run the forward pass again to "
        "record a fresh graph.")


def no_grad_fn() -> RuntimeError:
    """backward() on a tensor that nothing recorded."""
    return error(RuntimeError, "element 0 of tensors does not require grad and does not have "
                 "a grad_fn.", "create the inputs with requires_grad=True, and do not compute "
                 "the output inside no_grad() if you want to call .backward() on it.")


def implicit_grad(shape) -> RuntimeError:
    """backward() without gradient= on an output that is not a scalar."""
    return error(RuntimeError, "grad can be implicitly created only for scalar outputs; this "
                 f"output has shape {shape_text(shape)}.", "reduce it to a scalar first (e.g. "
                 ".sum()), or pass gradient= with the output's shape.")


def gradient_shape(given, expected) -> RuntimeError:
    """backward(gradient=...) with a gradient of another shape than the output."""
    return error(RuntimeError, f"Mismatch in shape: gradient has a shape of {shape_text(given)} "
                 f"and output has a shape of {shape_text(expected)}.",
                 "gradient= must have exactly the shape of the tensor you call .backward() on.")


def _hook_name(hook) -> str:
    return getattr(hook, "__name__", type(hook).__name__)


def hook_returned(hook, value) -> TypeError:
    """A gradient hook returned something that is neither a Tensor nor None."""
    cls = type(value)
    kind = cls.__qualname__
    if cls.__module__ != "builtins":
        kind = f"{cls.__module__}.{kind}"
    return error(TypeError, f"expected Variable, but hook returned {kind!r} (the hook is "
                 f"{_hook_name(hook)!r}).", "return a Tensor (wrap an array with tensor(...))"
                 ", or None to keep the gradient as it is.")


def hook_changed(hook, what: str, was, got) -> RuntimeError:
    """A gradient hook returned a tensor of another shape (``what="size"``) or dtype
    (``what="type"``) than the gradient it was given."""
    shown = (shape_text(was), shape_text(got)) if what == "size" else (was, got)
    return error(RuntimeError, f"hook {_hook_name(hook)!r} has changed the {what} of value "
                 f"(was {shown[0]} got {shown[1]}).", "a hook may change a gradient's values, "
                 "never its shape or dtype: return a tensor like the one it was given.")


def modified_inplace(name: str, op: str, shape, dtype, version: int, expected: int):
    """A tensor saved for backward was changed in place after it was saved."""
    return error(
        RuntimeError,
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: the tensor {name!r} of shape {shape_text(shape)} and dtype "
        f"{dtype} saved by {op} is at version {version}; expected version {expected} instead.",
        "do not modify a tensor in place between the forward pass and backward; use an "
        "out-of-place op or .clone() it first.")


def not_saved(op: str, name: str, saved: list) -> KeyError:
    """An op's backward reads a name its forward did not save."""
    return error(KeyError, f"the backward of {op} reads {name!r}, but its forward saved only "
                 f"{saved}.", f"call ctx.save({name}=...) in forward for every array backward "
                 "reads.")


def missing_backward(op: str) -> NotImplementedError:
    """An op class without a backward rule reached the sweep."""
    return NotImplementedError(f"the op {op!r} defines no backward rule, so it cannot be "
                               "differentiated.")


def rule_not_code(op: str, reason: str) -> SyntaxError:
    """An op's rule text, which is compiled into its backward, is not Python it can be
    compiled from (recording/rule.py)."""
    return error(SyntaxError, f"{op}'s rule cannot be compiled into its backward: {reason}.",
                 "write the rule as Python assignments, one gradient per input ('da = g * b'), "
                 "with any note after two spaces in parentheses; or write a backward(ctx, g) "
                 "and the rule stays text.")


def rule_unknown_name(name: str, namespace: str) -> AttributeError:
    """A compiled rule calls a function its sweep's namespace does not provide."""
    return error(AttributeError, f"a rule calls {name!r}, which the {namespace} has no "
                 "version of.", "use one of the namespace's functions, or write the op's "
                 "backward(ctx, g) by hand.")


def graph_cycle(cycle: str) -> CycleError:
    """A graph given as data has a cycle (``cycle`` reads ``a -> b -> a``)."""
    return CycleError(f"the graph has a cycle: {cycle}; a cycle has no topological order, so "
                      "no sweep can visit it.")


def grad_input_not_requiring(index: int) -> RuntimeError:
    """autograd.grad with respect to a tensor that does not require grad."""
    return error(RuntimeError, "One of the differentiated Tensors does not require grad "
                 f"(inputs[{index}]).", "differentiate with respect to tensors created with "
                 "requires_grad=True (or call .requires_grad_() on them first).")


def grad_input_unused(index: int) -> RuntimeError:
    """autograd.grad with respect to a tensor no output depends on."""
    return error(RuntimeError, f"The differentiated Tensor at index {index} appears to not "
                 "have been used in the graph. Set allow_unused=True if this is the desired "
                 "behavior.", "check that the outputs were computed from this tensor; with "
                 "allow_unused=True its gradient is None (or zeros with materialize_grads=True).")


def grad_count(outputs: int, gradients: int) -> RuntimeError:
    """autograd.grad with a grad_outputs list of another length than outputs."""
    return error(RuntimeError, f"got {outputs} tensors and {gradients} gradients",
                 "pass one grad_output per output (None for a scalar output).")


def grad_output_shape(index: int, given, expected) -> RuntimeError:
    """autograd.grad with a grad_output of another shape than its output."""
    return error(RuntimeError, f"Mismatch in shape: grad_output[{index}] has a shape of "
                 f"{shape_text(given)} and output[{index}] has a shape of "
                 f"{shape_text(expected)}.", "each grad_output must have exactly the shape of "
                 "its output.")


def grad_no_inputs() -> RuntimeError:
    """autograd.grad with an empty inputs list."""
    return error(RuntimeError, "`inputs` argument to `grad()` cannot be empty.",
                 "name the tensors whose gradients you want.")
