"""True or false, with a justification: T1–T10.

The learner picks a verdict and one justification among several:
``exercises.T9(False, "b")``. Every option has its own feedback, so a wrong pick
learns *why* it is wrong; every item names the engine experiment that decides it
(``exercises.T9.experiment()``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import true_false_experiments as ex
from . import words
from .exercise import Exercise, register
from .result import Result


@dataclass(frozen=True)
class Claim:
    """A claim, its truth, the justifications (key -> (text, right?, feedback))."""

    id: str
    claim: str
    truth: bool
    options: dict[str, tuple[str, bool, str]]
    experiment: Callable
    experiment_name: str


def _verdict(value) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "t", "yes", "false", "f",
                                                            "no"):
        return value.strip().lower() in ("true", "t", "yes")
    return None


def make_check(c: Claim) -> Callable[..., Result]:
    """The check for one claim: ``check(verdict, because)``."""

    def check(verdict=None, because=None) -> Result:
        choices = ", ".join(repr(k) for k in c.options)
        v = _verdict(verdict)
        if v is None:
            return Result(False, f"Say True or False first, then pick a justification: "
                                 f"{c.id}(True, 'a'). Justifications: {choices}.",
                          diagnosis="none")
        key = str(because).strip().lower() if because is not None else None
        if key is None:
            return Result(False, f"You said {v}; now back it up: pick one justification "
                                 f"({choices}), e.g. {c.id}({v}, 'a').", diagnosis="no_reason")
        if key not in c.options:
            return Result(False, f"{words.short(because)} is not one of the justifications "
                                 f"{choices}.",
                          diagnosis="unknown_name")
        text, right, feedback = c.options[key]
        run = f"Run {c.id}.experiment() to see the engine decide ({c.experiment_name})."
        if v == c.truth and right:
            return Result(True, f"Right: the claim is {c.truth}, and ({key}) is why. {feedback}",
                          diagnosis="correct")
        if v == c.truth:
            return Result(False, f"Right verdict, but ({key}) does not hold up: {feedback} {run}",
                          diagnosis="wrong_reason")
        if right:
            return Result(False, f"Your justification ({key}) is right, but follow it through: "
                                 f"it makes the claim {c.truth}, not {v}. {run}",
                          diagnosis="wrong_verdict")
        return Result(False, f"Not quite: ({key}) does not hold. {feedback} {run}",
                      diagnosis="wrong_verdict")

    check.__doc__ = f"``{c.id}(verdict, because)``: is “{c.claim}” true, and why?"
    return check


def _register(c: Claim, hint: str) -> None:
    right = next(k for k, (_, ok, _) in c.options.items() if ok)
    register(Exercise(
        c.id, "true_false", {"verdict": make_check(c)}, title=c.claim,
        question=f"True or false: “{c.claim}” Pick the verdict and the justification that "
                 f"holds: {c.id}(True/False, 'a'/'b'/...).",
        options={k: text for k, (text, _, _) in c.options.items()},
        experiment=c.experiment, hint=hint,
        solution=f"{c.truth}, because ({right}) {c.options[right][0]} "
                 f"Engine experiment: {c.experiment_name}.",
    ))


CLAIMS = [
    (Claim("T1", "Forward and reverse mode always give the same gradient.", True, {
        "a": ("Both apply the same exact local derivatives by the chain rule; only the order of "
              "the multiplications differs, so they agree up to rounding.", True,
              "The Jacobian is a product of local Jacobians; forward mode multiplies it from "
              "the inputs, reverse mode from the output."),
        "b": ("Both nudge the inputs and measure the change, so they agree approximately.",
              False, "Neither nudges anything: that is finite differences, which only "
                     "approximates the derivative."),
        "c": ("They agree only when the output is a scalar.", False,
              "They compute the same Jacobian for any shape; a scalar output only makes "
              "reverse mode cheaper."),
        "d": ("Reverse mode is an approximation of forward mode.", False,
              "Both are exact up to floating-point rounding."),
    }, ex.forward_vs_reverse, "Jacobians by JVPs and by VJPs agree to rounding"),
     "Think about what each mode multiplies, and in which order."),
    (Claim("T2", "Reverse mode is always faster than forward mode.", False, {
        "a": ("The cost depends on the shape: reverse mode needs one pass per output, forward "
              "mode one per input, so each wins one case.", True,
              "Many inputs → one output (a loss): reverse; one input → many outputs: forward."),
        "b": ("Reverse mode is always faster because it goes backwards.", False,
              "Direction is not speed; the number of passes is what counts."),
        "c": ("Forward mode is always faster because it needs no stored intermediates.", False,
              "It stores less, but needs one pass per input direction."),
    }, ex.mode_costs, "counted work of jacfwd vs jacrev in both cases"),
     "Count passes: how many inputs, how many outputs?"),
    (Claim("T3", "A computational graph can contain a cycle.", False, {
        "a": ("Each op is recorded after its inputs exist, so every edge points forward in "
              "time; a cycle would need a value computed from itself.", True,
              "And without a topological order there is no valid order for the sweep."),
        "b": ("Loops in Python code create cycles in the graph.", False,
              "A Python loop is unrolled while it runs: each iteration records new nodes."),
        "c": ("Recurrent networks are cyclic graphs.", False,
              "The recurrence is unrolled over time steps into an acyclic graph."),
    }, ex.cycles, "a hand-made cycle has no topological order and is rejected"),
     "What would a node need in order to be its own ancestor?"),
    (Claim("T4", "Autograd is symbolic differentiation.", False, {
        "a": ("It records the operations that ran and applies each op's local rule to numbers; "
              "it never builds a formula for the derivative.", True,
              "So its cost grows with the program, not with the size of an expanded formula."),
        "b": ("It expands the function into one formula and differentiates that.", False,
              "An expanded derivative grows exponentially with nesting depth; the recorded "
              "graph grows linearly."),
        "c": ("It is numerical differentiation with a tiny step.", False,
              "No step is taken: the local derivatives are exact."),
    }, ex.expression_swell, "expanded-formula size vs recorded-graph size with depth"),
     "Does the engine ever hold a formula, or only numbers and a record of ops?"),
    (Claim("T5", "Autograd nudges inputs and measures the change.", False, {
        "a": ("It applies each op's exact derivative; nudging (finite differences) has a "
              "truncation error for large steps and a rounding error for small ones.", True,
              "The error of a nudge never reaches zero; the engine's gradient is exact to "
              "rounding."),
        "b": ("It nudges, but with a step so small that the error vanishes.", False,
              "Below h ≈ 1e-5 the rounding error grows again: there is no vanishing step."),
        "c": ("It nudges each input in turn, so it costs one pass per input.", False,
              "One reverse pass gives every input's gradient."),
    }, ex.finite_differences, "finite-difference error vs step size h"),
     "What happens to a finite difference when h becomes very small?"),
    (Claim("T6", "Backprop and reverse-mode AD are different algorithms.", False, {
        "a": ("Backprop is reverse-mode AD applied to a network's loss: the same sweep works on "
              "any composed function.", True,
              "The engine runs the very same backward_steps on a network and on a formula."),
        "b": ("Backprop only works for neural networks, reverse mode for everything else.",
              False, "The sweep never looks at whether the ops form a network."),
        "c": ("Backprop uses the chain rule, reverse mode does not.", False,
              "Both are the chain rule, applied from the output back."),
    }, ex.same_sweep, "the same reverse sweep on a network and on a plain formula"),
     "Is there anything network-specific in the reverse sweep?"),
    (Claim("T7", "Backward needs forward values.", True, {
        "a": ("Local derivatives are evaluated at the forward values: sigmoid's backward reads "
              "its saved output σ to compute σ(1 − σ).", True,
              "That is why a recording forward pass keeps intermediates."),
        "b": ("Backward re-runs the forward pass from the input to get them.", False,
              "It reads the tensors saved during the forward pass; it does not re-run it."),
        "c": ("Only the weights are needed; activations can be recomputed from them.", False,
              "Without the input they cannot; and recomputing is extra work the engine only "
              "does with checkpointing."),
    }, ex.sigmoid_reads_output, "sigmoid's backward reads its saved output and fails "
                                "without it"),
     "Write down sigmoid's backward rule and list what it reads."),
    (Claim("T8", "A node feeding three ops gets the average of their adjoints.", False, {
        "a": ("It gets the sum: each use changes the loss on its own, and the changes add up "
              "(the multivariable chain rule).", True,
              "The engine accumulates each incoming gradient into the same buffer."),
        "b": ("The average, so the gradient does not grow with the number of uses.", False,
              "A value used three times does influence the loss three ways."),
        "c": ("Only the last op's adjoint, which overwrites the others.", False,
              "Overwriting is a classic bug (see S1), not the rule."),
    }, ex.fan_out, "x.grad equals the sum of the three contributions"),
     "Nudge x by ε: by how much does each of the three uses change the loss?"),
    (Claim("T9", "Seeding the output adjoint with 1 is arbitrary.", False, {
        "a": ("The seed is dL/dL = 1; seeding with c differentiates c·L, so every gradient "
              "scales by c.", True, "Any other seed changes every gradient."),
        "b": ("Any seed works because only the direction of the gradient matters.", False,
              "The size matters too: it sets the step of gradient descent."),
        "c": ("The seed is ignored by the engine.", False,
              "backward(gradient=c) uses c as the first upstream gradient."),
    }, ex.seeding, "seeding with c scales every gradient by c"),
     "What is the derivative of L with respect to L?"),
    (Claim("T10", "The gradient points in the direction of steepest increase.", True, {
        "a": ("To first order the change along a unit direction d is grad · d, largest when d "
              "points along grad.", True, "And smallest (most negative) along −grad."),
        "b": ("It points to the minimum of the loss.", False,
              "It is a local direction; −grad points downhill, not at the minimum."),
        "c": ("It points in the direction of steepest decrease.", False,
              "That is −grad: gradient descent steps against the gradient."),
    }, ex.steepest_ascent, "steps along +grad, −grad and random unit directions"),
     "Directional derivative: grad · d, for unit vectors d."),
]

def _reletter(c: Claim, position: int) -> Claim:
    """The same claim with its justifications re-lettered so that the right one sits at
    ``position`` (the right answer is not always "a")."""
    right = [v for v in c.options.values() if v[1]]
    wrong = [v for v in c.options.values() if not v[1]]
    position %= len(c.options)
    ordered = wrong[:position] + right + wrong[position:]
    letters = "abcdefgh"
    return Claim(c.id, c.claim, c.truth, dict(zip(letters, ordered)), c.experiment,
                 c.experiment_name)


for _index, (_claim, _hint) in enumerate(CLAIMS):
    _register(_reletter(_claim, 2 * _index + 1), _hint)
