"""Messages of the function transforms (func/transforms.py: jvp, vjp, jacrev, jacfwd, jacobian,
grad, hvp, vhp, and their compositions) and of checkpointing (func/checkpoint.py), which re-runs
a function in backward.

Raised from: func/__init__.py, func/checkpoint.py, func/functional.py, func/transforms.py.
"""

from __future__ import annotations

from ._text import error, shape_text


# -- forward mode and functional transforms -------------------------------------------------
def missing_jvp(op: str) -> NotImplementedError:
    """An op without a forward-mode rule reached jvp/jacfwd."""
    return error(NotImplementedError, f"the op {op!r} defines no forward-mode rule (jvp), so "
                 "jvp/jacfwd cannot push a tangent through it.", "use reverse mode (vjp, "
                 "jacrev) for this function, or add a jvp(ctx, *tangents) staticmethod beside "
                 "the op's backward.")


def has_aux(transform: str) -> NotImplementedError:
    """has_aux=True, which this engine's transforms do not offer."""
    return NotImplementedError(f"{transform}: has_aux=True is not supported by this engine.")


def argnums_range(argnum: int, n_args: int) -> RuntimeError:
    """argnums naming an argument the function was not called with."""
    return RuntimeError(f"argnums {argnum} is out of range for a function called with "
                        f"{n_args} argument(s).")


def primals_tangents(transform: str, n_primals: int, n_tangents: int) -> RuntimeError:
    """jvp with a different number of tangents than primals."""
    return error(RuntimeError, f"{transform}: expected one tangent per primal, got {n_primals} "
                 f"primal(s) and {n_tangents} tangent(s).", "pass tuples of the same length, "
                 "e.g. jvp(f, (x, y), (dx, dy)).")


def tangent_shape(transform: str, index: int, given, expected) -> RuntimeError:
    """A tangent whose shape is not its primal's."""
    return error(RuntimeError, f"{transform}: Expected tangents[{index}] to have the shape of "
                 f"primals[{index}], {shape_text(expected)}, but got {shape_text(given)}.",
                 "a tangent is a direction in input space: it has exactly its primal's shape.")


def v_shape(transform: str, index: int, given, expected, against: str = "inputs"
            ) -> RuntimeError:
    """hvp/vhp/jvp (``against`` the inputs) or vjp (against the outputs) with a v whose
    shape is not its partner's (PyTorch's "v has invalid size"); never broadcast."""
    space = "input" if against == "inputs" else "output"
    return error(RuntimeError, f"{transform}: v has invalid size: v[{index}] should have the "
                 f"shape of {against}[{index}], {shape_text(expected)}, but got "
                 f"{shape_text(given)}.", f"v is a direction in {space} space: it has exactly "
                 f"its {space}'s shape (v is not broadcast).")


def non_float_primal(transform: str, index: int, dtype) -> RuntimeError:
    """A transform asked to differentiate with respect to integer input."""
    return error(RuntimeError, f"{transform}: only floating point inputs can be "
                 f"differentiated, but input {index} has dtype {dtype}.",
                 "convert it first, e.g. tensor(data, dtype=float64).")


def non_float_tangent(transform: str, index: int, dtype) -> ValueError:
    """A tangent of integer (or bool) dtype: PyTorch refuses it rather than cast it."""
    return error(ValueError, f"{transform}: Expected tangent to be floating point or complex, "
                 f"but got: {dtype} (tangents[{index}]).", "a tangent is a direction of "
                 "change: give it the primal's float dtype, e.g. tensor(data, dtype=float64).")


def checkpoint_no_grad() -> UserWarning:
    """checkpoint over inputs none of which requires grad, with no parameters found."""
    return error(UserWarning, "checkpoint: none of the inputs requires grad and no parameters "
                 "were found, so no gradient will flow through this segment.",
                 "pass parameters=[...] if the function uses tensors that need gradients.")


def cotangent_shape(index: int, given, expected) -> RuntimeError:
    """vjp_fn given a cotangent whose shape is not its output's."""
    return error(RuntimeError,
                 f"vjp: Mismatch in shape: cotangent {index} has a shape of "
                 f"{shape_text(given)} and output {index} has a shape of {shape_text(expected)}.",
                 "a cotangent weighs each output element: it has exactly the output's shape.")


def function_output(transform: str, kind: str) -> TypeError:
    """A transformed function that returned something other than tensors."""
    return error(TypeError, f"{transform}: the function must return a Tensor or a tuple of "
                 f"Tensors, got {kind}.", "return the tensor itself, not .item() or .numpy() "
                 "of it.")


def checkpoint_output(kind: str) -> TypeError:
    """A checkpointed function that returned something other than one tensor."""
    return error(TypeError, f"checkpoint: the checkpointed function must return one Tensor, "
                 f"got {kind}.", "checkpoint each output's computation separately, or return "
                 "one tensor.")


def checkpoint_segments(segments, n_modules: int) -> ValueError:
    """checkpoint_sequential with a segment count outside 1..len(modules)."""
    return error(ValueError, "checkpoint_sequential: segments must be between 1 and the "
                 f"number of modules ({n_modules}), got {segments}.", "about sqrt(number of "
                 "layers) segments balances memory and recomputation.")


def checkpoint_generator(count: int) -> RuntimeError:
    """A checkpointed segment drew from random generators whose state was not saved."""
    return error(RuntimeError, f"checkpoint: the segment drew random numbers from {count} "
                 "generator(s) whose state was not saved, so recomputing it in backward would "
                 "draw different numbers (e.g. another dropout mask) and give wrong "
                 "gradients.", "pass them with checkpoint(..., generators=[g]), or make them "
                 "attributes (.generator) of the checkpointed module.")


def checkpoint_forward_mode() -> NotImplementedError:
    """jvp through a checkpointed segment with respect to its parameters."""
    return NotImplementedError("checkpoint: forward mode through a checkpointed segment "
                               "w.r.t. its parameters is not supported.")


def hvp_not_scalar(shapes: list, transform: str = "hvp") -> RuntimeError:
    """hvp/vhp/hessian of a function whose output is not a single number."""
    return error(RuntimeError, f"{transform}: the function must return one tensor with a single "
                 f"element (a scalar loss); it returned shapes {shapes}.",
                 "sum or average it first, or take the Jacobian (jacrev) instead.")


# -- grad and composed transforms ----------------------------------------------------------
def argnums_type(argnums) -> RuntimeError:
    """argnums that is neither an int nor a tuple of ints."""
    return error(RuntimeError, f"argnums must be int or Tuple[int, ...], got: "
                 f"{type(argnums)}.", "name the positional argument(s) to differentiate by "
                 "index, e.g. argnums=0 or argnums=(0, 2).")


def argnums_empty() -> RuntimeError:
    """argnums=(): nothing to differentiate with respect to."""
    return error(RuntimeError, "argnums must be non-empty: there is nothing to differentiate "
                 "with respect to.", "name at least one positional argument, e.g. argnums=0.")


def argnums_unique(argnums) -> RuntimeError:
    """argnums naming one argument twice."""
    return error(RuntimeError, f"argnums elements must be unique, got {argnums}.",
                 "name each argument once.")


def grad_output_type(transform: str, kind: str) -> RuntimeError:
    """grad of a function that returned something other than one Tensor."""
    return error(RuntimeError, f"{transform}(f)(*args): Expected f(*args) to return a Tensor, "
                 f"got {kind}.", "grad differentiates one scalar Tensor: return the loss "
                 "itself (not .item() of it); for several outputs use jacrev or vjp; to "
                 "return extra values pass has_aux=True and return (loss, aux).")


def grad_not_scalar(transform: str, shape) -> RuntimeError:
    """grad of a function whose output is not a 0-d tensor (as torch.func.grad)."""
    return error(RuntimeError, f"{transform}(f)(*args): Expected f(*args) to return a scalar "
                 f"Tensor, got tensor with {len(shape)} dims (shape {shape_text(shape)}). "
                 "Maybe you wanted to use the vjp or jacrev APIs instead?",
                 "a gradient is the derivative of one number: sum or average the output "
                 "first (out.sum()), or take the Jacobian with jacrev.")


def aux_output(transform: str) -> RuntimeError:
    """has_aux=True but the function did not return a pair (output, aux)."""
    return error(RuntimeError, f"{transform}(f)(*args): output of function f should be a "
                 "tuple: (output, aux) if has_aux is True.", "return exactly two things, e.g. "
                 "return loss, {'logits': logits}; or drop has_aux=True.")


def reverse_over_forward(transform: str) -> NotImplementedError:
    """jvp/jacfwd inside grad/jacrev/vjp/hvp, on tensors that transform differentiates."""
    return error(NotImplementedError, f"{transform}: its primals depend on tensors that an "
                 "enclosing reverse-mode transform (grad, jacrev, vjp, hvp, or a backward "
                 "through them) differentiates, but forward mode computes its tangents with "
                 "NumPy outside the graph, so that transform would see a constant and return "
                 "zeros.", "put forward mode outside: jvp(grad(f)), jacfwd(jacrev(f)) work; or "
                 "use reverse mode throughout: jacrev(jacrev(f)).")


def forward_over_forward(transform: str) -> NotImplementedError:
    """jvp/jacfwd inside another jvp/jacfwd, on tensors that carry its tangent."""
    return error(NotImplementedError, f"{transform}: its primals carry the tangent of an "
                 "enclosing jvp/jacfwd, but a forward-mode pass does not record its own "
                 "tangent rules as ops, so the enclosing pass would see a constant.",
                 "compose forward mode over reverse mode instead: jvp(grad(f)) or "
                 "jacfwd(jacrev(f)).")


def hessian_evaluates() -> str:
    """func.hessian called the old way, with inputs (a DeprecationWarning's text)."""
    return ("func.hessian(f, x) evaluating at x is deprecated: func.hessian follows "
            "torch.func and returns a function, func.hessian(f)(x); to evaluate in one call, "
            "as torch.autograd.functional.hessian, use "
            "autograd_core.autograd.functional.hessian(f, x).")


def jacobian_strategy(strategy) -> ValueError:
    """autograd.functional.jacobian(strategy=...) that is neither mode."""
    return error(ValueError, 'jacobian: Expected strategy to be either "forward-mode" or '
                 f'"reverse-mode", got {strategy!r}.', '"forward-mode" costs one JVP pass '
                 'per input element, "reverse-mode" one VJP pass per output element: pick '
                 "the smaller side.")


def functional_unsupported(transform: str, option: str) -> NotImplementedError:
    """An option of torch.autograd.functional the engine does not offer."""
    return error(NotImplementedError, f"{transform}: {option}=True is not supported by the "
                 "engine.", "call it inside an enclosing transform (or on tensors that "
                 "require grad) to keep the result on the graph; leave the option out.")


def v_none(transform: str, what: str, shape) -> RuntimeError:
    """autograd.functional's vjp/jvp without v, where v cannot be left out."""
    return error(RuntimeError, f"{transform}: v can be left out only when {what} has a single "
                 f"element, but it has shape {shape_text(shape)}.", "pass v, a tensor of that "
                 "shape.")


def moved_to_functional(name: str) -> str:
    """func.hvp/vhp/jacobian, torch.autograd.functional's names (a DeprecationWarning)."""
    return (f"autograd_core.func.{name} is deprecated: torch.func has no {name}; it is "
            f"torch.autograd.functional's, here autograd_core.autograd.functional.{name}.")


def no_func_attribute(name: str) -> AttributeError:
    """A name autograd_core.func does not have (Python's own wording)."""
    return AttributeError(f"module 'autograd_core.func' has no attribute {name!r}")
