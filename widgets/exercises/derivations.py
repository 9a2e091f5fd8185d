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
from autograd_core.nn.functional import conv2d

from . import mlp
from .context import Mistake
from .exercise import Exercise, register
from .feedback import check_gradient
from .parts import check_named
from .problems import Problem, rng
from .result import Result

# -- G5: a 3-layer MLP --------------------------------------------------------------------


def check_g5(**answers) -> Result:
    """``G5(dW2=..., db2=..., delta1=...)`` on ``G5.problem()`` (any subset of the three)."""
    return check_named(answers, mlp.PARTS, lambda a: mlp.check_parts(mlp.problem(), a))


register(Exercise("G5", "derivation", {"gradients": check_g5}, level="M", problem=mlp.problem))


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


register(Exercise("G6", "derivation", {"gradients": check_g6}, level="M", problem=g6_problem))


# -- G7: conv2d -----------------------------------------------------------------------------




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


register(Exercise("G7", "derivation", {"gradients": check_g7}, level="M", problem=g7_problem))


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


register(Exercise("G13", "derivation", {"gradients": check_g13}, level="S", problem=g13_problem))
