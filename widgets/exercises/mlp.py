"""The 3-layer MLP of G5 and G12: its problem data, the engine's gradients, and the
checks of a learner's dW2, db2 and hidden-layer delta with their named mistakes.

Layout (the engine's, which is PyTorch's): rows are examples, weights are
(out_features, in_features):

    z1 = x @ W1.T + b1,  a1 = tanh(z1)
    z2 = a1 @ W2.T + b2, a2 = tanh(z2)
    z3 = a2 @ W3.T + b3, loss = mean over the batch of ½‖z3 − target‖²

so delta2 = dL/dz2 has shape (N, H2), dW2 = delta2.T @ a1, db2 = delta2.sum(0), and
the delta handed to the hidden layer is delta1 = (delta2 @ W2) * (1 − a1²): the
row-layout spelling of W2ᵀδ2 ⊙ f'(z1).
"""

from __future__ import annotations

import numpy as np

from ..feedback.check import check_gradient
from ..feedback.context import Mistake
from ..feedback.result import Result
from .problems import Problem, rng

DESCRIPTION = (
    "A 3-layer MLP in the engine's layout: rows are examples, weights are (out, in) like "
    "nn.Linear.\n"
    "  z1 = x @ W1.T + b1; a1 = tanh(z1); z2 = a1 @ W2.T + b2; a2 = tanh(z2);\n"
    "  z3 = a2 @ W3.T + b3; loss = mean over the batch of 0.5 * sum((z3 - target)**2, axis=1)\n"
    "The forward values z1, a1, z2, a2, z3 are given too."
)
PARTS = ("dW2", "db2", "delta1")


def problem(square: bool = False, seed: int = 5) -> Problem:
    """Seeded MLP data: N=4, D=3, H1=5, H2=4 (or H1=H2=4 when ``square``), 2 outputs."""
    g = rng(seed + (100 if square else 0))
    n, d, h1, h2, k = 4, 3, (4 if square else 5), 4, 2
    x = g.standard_normal((n, d))
    w1, b1 = g.standard_normal((h1, d)) * 0.8, g.standard_normal(h1) * 0.1
    w2, b2 = g.standard_normal((h2, h1)) * 0.8, g.standard_normal(h2) * 0.1
    w3, b3 = g.standard_normal((k, h2)) * 0.8, g.standard_normal(k) * 0.1
    target = g.standard_normal((n, k))
    z1 = x @ w1.T + b1
    a1 = np.tanh(z1)
    z2 = a1 @ w2.T + b2
    a2 = np.tanh(z2)
    z3 = a2 @ w3.T + b3
    return Problem(DESCRIPTION, x=x, W1=w1, b1=b1, W2=w2, b2=b2, W3=w3, b3=b3, target=target,
                   z1=z1, a1=a1, z2=z2, a2=a2, z3=z3)


def _engine_gradients(p: Problem) -> dict[str, np.ndarray]:
    """dW2, db2, delta1 (= dL/dz1) and delta2 from the engine's backward pass."""
    import autograd_core as ag
    from autograd_core.nn import functional as F

    params = {k: ag.tensor(p[k], requires_grad=True) for k in ("W1", "b1", "W2", "b2", "W3",
                                                               "b3")}
    z1 = F.linear(ag.tensor(p.x), params["W1"], params["b1"])
    z1.retain_grad()
    z2 = F.linear(ag.tanh(z1), params["W2"], params["b2"])
    z2.retain_grad()
    z3 = F.linear(ag.tanh(z2), params["W3"], params["b3"])
    loss = 0.5 * ((z3 - ag.tensor(p.target)) ** 2).sum(dim=1).mean()
    loss.backward()
    return {"dW2": params["W2"].grad.numpy(), "db2": params["b2"].grad.numpy(),
            "delta1": z1.grad.numpy(), "delta2": z2.grad.numpy()}


def _mistakes(p: Problem, e: dict) -> dict[str, list[Mistake]]:
    """Wrong answers worth naming, built from the engine's delta2 and the forward values."""
    d2, a1, a2, z1 = e["delta2"], p.a1, p.a2, p.z1
    no_fprime2 = d2 / (1 - a2 ** 2)  # dL/da2: the gradient before going through tanh
    found = {
        "dW2": [Mistake(no_fprime2.T @ a1, "Your dW2 is missing tanh'(z2): you used dL/da2 where "
                        "dL/dz2 is needed.",
                        "Go back through a2 = tanh(z2) before you reach W2.",
                        "missing_activation_derivative"),
                Mistake(d2.T @ z1, "Your dW2 uses z1, but layer 2's input is a1 = tanh(z1).",
                        "dW2 = delta2.T @ (the input of layer 2).", "wrong_input")],
        "db2": [Mistake(no_fprime2.sum(0), "Your db2 is missing tanh'(z2): you summed dL/da2 "
                        "where dL/dz2 is needed.",
                        "db2 is delta2 summed over the batch, with delta2 = dL/dz2.",
                        "missing_activation_derivative")],
        "delta1": [],
    }
    if p.W2.shape[0] == p.W2.shape[1]:
        found["delta1"].append(Mistake(
            (d2 @ p.W2.T) * (1 - a1 ** 2),
            "Your delta1 uses W2.T where W2 itself is needed (in the engine's row layout). The "
            "shapes agree only because W2 is square.",
            "Write the shapes under each factor: (N, H2) @ (H2, H1) gives (N, H1).",
            "transpose"))
    return found


def _context(p: Problem, e: dict) -> dict[str, dict]:
    """What the gradient checker needs to name a mistake in each part: the parameter it is
    the gradient of, the batch size, the wrong answers, delta1's activation derivative."""
    mistakes = _mistakes(p, e)
    n = p.x.shape[0]
    fprime1 = 1 - p.a1 ** 2
    wrong = {"1 − z1² (tanh'(z1) is written with tanh(z1), not with z1)": 1 - p.z1 ** 2}
    if p.a2.shape == p.a1.shape:
        wrong["1 − a2², the derivative of layer 2 (the hidden delta goes back through "
              "layer 1's activation)"] = 1 - p.a2 ** 2
    return {
        "dW2": dict(of="W2", batch_size=n, mistakes=mistakes["dW2"]),
        "db2": dict(of="b2", batch_size=n, mistakes=mistakes["db2"]),
        "delta1": dict(of="z1", batch_size=n, activation_derivative=fprime1,
                       before_activation=e["delta2"] @ p.W2, wrong_derivatives=wrong,
                       mistakes=mistakes["delta1"]),
    }


def _check_parts(p: Problem, answers: dict, *, label: str = "") -> list[Result]:
    """One Result per answer given (keys among ``PARTS``), each named ``label + part``."""
    e = _engine_gradients(p)
    found = _context(p, e)
    return [check_gradient(answers[part], e[part], name=label + part, **found[part])
            for part in PARTS if part in answers]
