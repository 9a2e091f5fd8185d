"""Derivation checks: a learner's hand-derived gradient against the engine's.

Every expected value here is computed by running the engine on the problem's data
(never written down by hand); the wrong answers worth naming are built from the
same data so that the feedback can say *which* mistake was made.

G5 (3-layer MLP), G6 (matmul), G7 (conv2d), G13 (mean vs sum); G8, G9 and G14 live
in ``layer_items``.
"""

from __future__ import annotations

import numpy as np

import autograd_core as ag

from . import mlp
from .context import Mistake
from .exercise import Exercise, register
from .features import not_available
from .gradient import check_gradient
from .parts import check_named
from .problems import Problem, rng
from .result import Result

# -- G5: a 3-layer MLP --------------------------------------------------------------------


def check_g5(**answers) -> Result:
    """``G5(dW2=..., db2=..., delta1=...)`` on ``G5.problem()`` (any subset of the three)."""
    return check_named(answers, mlp.PARTS, lambda a: mlp.check_parts(mlp.problem(), a))


register(Exercise(
    "G5", "A 3-layer MLP: dL/dW2, dL/db2 and the delta handed to the hidden layer",
    "derivation", {"gradients": check_g5}, level="M", problem=mlp.problem,
    question="In a 3-layer MLP, derive dL/dW2, dL/db2 and the gradient handed to the hidden "
             "layer (delta1 = dL/dz1), in the engine's layout (rows are examples, weights are "
             "(out, in)). Compute them with NumPy from G5.problem() and check: "
             "G5(dW2=..., db2=..., delta1=...).",
    hint="Start from delta3 = dL/dz3 = (z3 - target) / N. Then delta2 = (delta3 @ W3) * "
         "(1 - a2**2); dW2 = delta2.T @ a1; db2 = delta2.sum(axis=0).",
    solution="p = G5.problem(); N = len(p.x)\n"
             "delta3 = (p.z3 - p.target) / N\n"
             "delta2 = (delta3 @ p.W3) * (1 - p.a2**2)\n"
             "dW2 = delta2.T @ p.a1          # (H2, H1), the shape of W2\n"
             "db2 = delta2.sum(axis=0)       # b2 was broadcast over the batch\n"
             "delta1 = (delta2 @ p.W2) * (1 - p.a1**2)   # W2ᵀδ2 ⊙ f'(z1) in row layout",
))


# -- G6: C = A @ B --------------------------------------------------------------------------


def g6_problem(square: bool = False) -> Problem:
    """A (2, 3), B (3, 4) and the upstream gradient G = dL/dC (2, 4); 3x3 when ``square``."""
    g = rng(6)
    m, k, n = (3, 3, 3) if square else (2, 3, 4)
    return Problem("C = A @ B; G = dL/dC is the upstream gradient. Find dA = dL/dA and "
                   "dB = dL/dB.", A=g.standard_normal((m, k)), B=g.standard_normal((k, n)),
                   G=g.standard_normal((m, n)))


def check_g6(*, square: bool = False, **answers) -> Result:
    """``G6(dA=..., dB=...)``; pass ``square=True`` for answers from ``problem(square=True)``."""
    p = g6_problem(square)

    def run(given):
        a, b = ag.tensor(p.A, requires_grad=True), ag.tensor(p.B, requires_grad=True)
        (a @ b).backward(p.G)
        ones = np.ones_like(p.G)
        missing = "You multiplied by a matrix of ones instead of the upstream gradient G."
        context = {
            "dA": dict(of="A", mistakes=[Mistake(ones @ p.B.T, missing,
                                                 "dA = G @ B.T: G is dL/dC.", "missing_upstream")]),
            "dB": dict(of="B", mistakes=[Mistake(p.A.T @ ones, missing,
                                                 "dB = A.T @ G: G is dL/dC.", "missing_upstream")]),
        }
        grads = {"dA": a.grad, "dB": b.grad}
        return [check_gradient(given[k], grads[k], name=k, **context[k]) for k in ("dA", "dB")
                if k in given]

    return check_named(answers, ("dA", "dB"), run)


register(Exercise(
    "G6", "Gradients of C = A B", "derivation", {"gradients": check_g6}, level="M",
    problem=g6_problem,
    question="For C = A @ B with upstream gradient G = dL/dC, what are dA and dB? Compute them "
             "from G6.problem() (non-square) and check with G6(dA=..., dB=...); then try "
             "G6.problem(square=True) with G6(dA=..., dB=..., square=True).",
    hint="Each gradient has the shape of its matrix; there is only one product of G with the "
         "other operand that has that shape.",
    solution="dA = G @ B.T    # (m, n) @ (n, k) -> (m, k), A's shape\n"
             "dB = A.T @ G    # (k, m) @ (m, n) -> (k, n), B's shape",
))


# -- G7: conv2d -----------------------------------------------------------------------------


def _conv2d():
    try:
        from autograd_core.nn.functional import conv2d
    except ImportError:
        raise not_available("autograd_core.nn.functional.conv2d", "G7") from None
    return conv2d


def g7_problem(stride: int = 1, padding: int = 1) -> Problem:
    """x (2, 2, 5, 5), kernel w (3, 2, 3, 3) and the upstream gradient of the output."""
    g = rng(7)
    x, w = g.standard_normal((2, 2, 5, 5)), g.standard_normal((3, 2, 3, 3))
    size = (5 + 2 * padding - 3) // stride + 1
    return Problem(f"y = conv2d(x, w, stride={stride}, padding={padding}) (cross-correlation, "
                   "like every deep-learning library); G = dL/dy. Find dx and dw.",
                   x=x, w=w, G=g.standard_normal((2, 3, size, size)), stride=stride,
                   padding=padding)


def _conv_grads(p: Problem, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    conv2d = _conv2d()
    x_t, w_t = ag.tensor(p.x, requires_grad=True), ag.tensor(w, requires_grad=True)
    conv2d(x_t, w_t, stride=p.stride, padding=p.padding).backward(p.G)
    return x_t.grad.numpy(), w_t.grad.numpy()


def check_g7(*, stride: int = 1, padding: int = 1, **answers) -> Result:
    """``G7(dx=..., dw=...)`` for ``G7.problem(stride, padding)`` (pass the same values)."""
    p = g7_problem(stride, padding)

    def run(given):
        dx, dw = _conv_grads(p, p.w)
        # dx is linear in the kernel: the engine's dx for the flipped kernel is exactly
        # "the full convolution with the kernel NOT rotated".
        dx_unrotated, _ = _conv_grads(p, p.w[..., ::-1, ::-1])
        context = {
            "dx": dict(of="x", mistakes=[Mistake(
                dx_unrotated, "Your dx uses the kernel without rotating it by 180°.",
                "dx is the full convolution of G with the kernel rotated 180° (flipped in both "
                "spatial axes), spread back with the stride and cropped by the padding.",
                "unrotated_kernel")]),
            "dw": dict(of="w", batch_size=p.x.shape[0], mistakes=[Mistake(
                dw[..., ::-1, ::-1], "Your dw is rotated by 180°: correlate the (padded) input "
                                     "with G, do not convolve.",
                "dw[o, c, i, j] = Σ over batch and output positions of G[n, o, p, q] · "
                "x_padded[n, c, p·stride + i, q·stride + j].", "rotated_kernel_grad")]),
        }
        grads = {"dx": dx, "dw": dw}
        return [check_gradient(given[k], grads[k], name=k, **context[k]) for k in ("dx", "dw")
                if k in given]

    return check_named(answers, ("dx", "dw"), run)


register(Exercise(
    "G7", "Convolution gradients with respect to input and kernel", "derivation",
    {"gradients": check_g7}, level="M", problem=g7_problem,
    question="y = conv2d(x, w, stride, padding). Derive dx (a full convolution of the upstream "
             "gradient with the kernel rotated 180°) and dw (the correlation of the input with "
             "the upstream gradient, summed over positions and the batch). Check with "
             "G7(dx=..., dw=...), then with G7.problem(stride=2, padding=0) and "
             "G7(dx=..., dw=..., stride=2, padding=0).",
    hint="dw[o, c, i, j] = Σ_n Σ_p,q G[n, o, p, q] · x_pad[n, c, p·s + i, q·s + j]; dx is "
         "the same sum read the other way: scatter G[n, o, p, q] · w[o, c, i, j] into "
         "x_pad[n, c, p·s + i, q·s + j], then crop the padding.",
    solution="s, P = p.stride, p.padding\n"
             "xp = np.pad(p.x, ((0, 0), (0, 0), (P, P), (P, P)))\n"
             "dw = np.zeros_like(p.w); dxp = np.zeros_like(xp)\n"
             "for i in range(3):\n"
             "    for j in range(3):\n"
             "        win = xp[:, :, i:i + s * Ho:s, j:j + s * Wo:s]   # Ho, Wo = G.shape[2:]\n"
             "        dw[:, :, i, j] = np.einsum('nopq,ncpq->oc', p.G, win)\n"
             "        dxp[:, :, i:i + s * Ho:s, j:j + s * Wo:s] += np.einsum('nopq,oc->ncpq', "
             "p.G, p.w[:, :, i, j])\n"
             "dx = dxp[:, :, P:P + 5, P:P + 5]",
))


# -- G13: loss reduction mean -> sum -------------------------------------------------------------


def g13_problem() -> Problem:
    """Linear regression on 8 examples; the mean-loss gradient is given (from the engine)."""
    g = rng(13)
    x, w, t = g.standard_normal((8, 3)), g.standard_normal(3), g.standard_normal(8)
    w_t = ag.tensor(w, requires_grad=True)
    ((ag.tensor(x) @ w_t - ag.tensor(t)) ** 2).mean().backward()
    return Problem("L_mean = mean((x @ w - t)**2) over the N = 8 examples, and "
                   "L_sum = sum((x @ w - t)**2). grad_mean = dL_mean/dw (from the engine). "
                   "Find grad_sum = dL_sum/dw, and the factor grad_sum / grad_mean.",
                   x=x, w=w, t=t, grad_mean=w_t.grad.numpy())


def check_g13(**answers) -> Result:
    """``G13(grad_sum=..., factor=...)`` (either or both)."""
    p = g13_problem()

    def run(given):
        w_t = ag.tensor(p.w, requires_grad=True)
        ((ag.tensor(p.x) @ w_t - ag.tensor(p.t)) ** 2).sum().backward()
        grad_sum = w_t.grad.numpy()
        n = p.x.shape[0]
        results = []
        if "grad_sum" in given:
            results.append(check_gradient(given["grad_sum"], grad_sum, name="grad_sum",
                                          batch_size=n, of="w"))
        if "factor" in given:
            ratio = grad_sum / p.grad_mean  # every entry: the same factor
            inverse = Mistake(1 / ratio[0], "That is the factor from sum to mean; from mean "
                              "to sum it is the inverse.", "", "inverse")
            results.append(check_gradient(given["factor"], ratio[0], name="factor",
                                          reference="the engine's ratio", mistakes=[inverse]))
        return results

    return check_named(answers, ("grad_sum", "factor"), run)


register(Exercise(
    "G13", "Loss reduction mean → sum: what happens to every gradient?", "derivation",
    {"gradients": check_g13}, level="S", problem=g13_problem,
    question="Switch the loss from the mean over the batch to the sum. What happens to every "
             "gradient? Compute grad_sum from G13.problem() and the factor: "
             "G13(grad_sum=..., factor=...).",
    hint="The sum is N times the mean, and differentiation is linear.",
    solution="grad_sum = N * grad_mean   (N = 8): same direction, N times longer; factor = 8.",
))
