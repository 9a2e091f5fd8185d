"""Every error message the widgets raise: drawing a graph, the views' inputs, the
stepper's steps, and reading a learner's typed answer.

The engine's messages live in ``autograd_core.errors``; these are the presentation
layer's own, built the same way (a sentence, then one ``Hint:`` line) with the
engine's ``error`` helper, so both layers read alike.
"""

from __future__ import annotations

from autograd_core.errors import error

__all__ = ["renderer_missing", "renderer_failed", "view_needs_tensor", "view_needs_graph",
           "step_out_of_range", "step_input", "unreadable_answer"]


# -- drawing (svg.py) -----------------------------------------------------------------------
def renderer_missing() -> RuntimeError:
    """The pinned Graphviz renderer is not installed."""
    return error(RuntimeError, "cannot draw the graph: the Graphviz renderer 'graphviz-pure' "
                 "was not found (neither next to this Python nor on PATH).", "pip install "
                 "graphviz-pure==0.2.2 (or pip install -e \".[widgets]\" in the project "
                 "folder), then restart the kernel.")


def renderer_failed(code: int, stderr: str) -> RuntimeError:
    """The renderer ran but could not lay the DOT text out."""
    return error(RuntimeError, f"graphviz-pure could not lay out the graph (exit code {code}): "
                 f"{stderr.strip()}", "this is a bug in the DOT text widgets.render wrote; "
                 "please report it with the program that built the graph.")


# -- the views' inputs (live.py, tracer.py) -------------------------------------------------
def view_needs_tensor(what: str, given, example: str) -> TypeError:
    """A view given something other than an engine Tensor."""
    return error(TypeError, f"{what} expects a Tensor that an autograd_core program computed, "
                 f"got {type(given).__name__}.", "pass the output of your forward pass, e.g. "
                 f"{example}.")


def view_needs_graph(what: str, requires_grad: bool = False) -> ValueError:
    """A view given a tensor with nothing recorded behind it: a leaf that requires
    grad (no op has run on it yet), or a tensor that does not require grad."""
    if requires_grad:
        return error(ValueError, f"{what}: this tensor has no recorded graph: it is a leaf "
                     "(a tensor you created, with requires_grad=True), and no op has run on "
                     "it yet, so there is no forward pass to show.", "pass a result computed "
                     f"from it, e.g. {what}(loss), or the function that computes it, e.g. "
                     f"{what}(lambda: model(x)).")
    return error(ValueError, f"{what}: this tensor has no recorded graph (it does not require "
                 "grad, or it was computed under no_grad()).", "create an input with "
                 "requires_grad=True and compute the output outside no_grad().")


# -- stepping the sweep (stepper.py) --------------------------------------------------------
def step_out_of_range(step: int, last: int) -> IndexError:
    """A step number outside the sweep."""
    return error(IndexError, f"step {step} is out of range: this sweep has steps 0 (before "
                 f"the first node) to {last}.", "use stepper.first(), .next(), .previous(), "
                 f".last(), or a step in 0..{last}.")


def step_input(names: list, given) -> ValueError:
    """A prediction for an input the current step does not send a gradient to."""
    return error(ValueError, f"this step sends gradients to the inputs {names}, not to "
                 f"{given!r}.", "pass one of those names, or an index into that list.")


# -- reading a typed answer (exercises/inputs.py) -------------------------------------------
def unreadable_answer(text: str, reason: str) -> ValueError:
    """A typed answer that is not a Python literal of numbers."""
    return error(ValueError, f"could not read {text!r} as a number or an array: {reason}.",
                 "type a Python literal such as 0.5, [1.0, -2.0] or [[1, 2], [3, 4]].")
