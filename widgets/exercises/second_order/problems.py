"""The numbers lesson 14's items work on, and the engine's answers for them.

* a few points for tanh'' (D1);
* a small network, ``pred = tanh(X @ W) @ u`` with the mean squared error, whose loss is
  differentiated twice with respect to the hidden weights W (D2, D3);
* an L2-regularised logistic regression, the convex problem of the Newton step (D4).

Every expected value is the engine's: ``autograd.grad`` twice, ``functional.hessian`` or
``functional.hvp`` (never a formula written here), so the checks test a learner's derivation
against the engine, and the engine's second derivatives are tested against finite
differences and PyTorch in tests/engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import autograd_core as ag
from autograd_core import autograd
from autograd_core.autograd.functional import hessian, hvp

from ..problems import Problem, rng

# -- D1: tanh'' ------------------------------------------------------------------------------


def tanh_points(seed: int = 141, size: int = 7) -> np.ndarray:
    """Points to evaluate tanh'' at: spread over [-2.5, 2.5], where tanh bends most."""
    return np.sort(rng(seed).uniform(-2.5, 2.5, size))


def _engine_tanh_second(x: np.ndarray) -> np.ndarray:
    """tanh'' at ``x`` by the engine: the gradient recorded (``create_graph=True``), then
    differentiated again."""
    t = ag.tensor(np.array(x, dtype=np.float64), requires_grad=True)
    (first,) = autograd.grad(ag.tanh(t).sum(), t, create_graph=True)
    (second,) = autograd.grad(first.sum(), t)
    return second.numpy()


# -- D2, D3: a small network's loss ---------------------------------------------------------


@dataclass(frozen=True)
class Network:
    """``pred = tanh(X @ W) @ u``, loss = mean((pred - y)²): X (N, d), W (d, k), u (k,)."""

    X: np.ndarray
    W: np.ndarray
    u: np.ndarray
    y: np.ndarray

    def loss(self, W: ag.Tensor) -> ag.Tensor:
        """The loss as a function of the hidden weights (a Tensor), by engine ops."""
        pred = ag.tanh(ag.tensor(self.X) @ W) @ ag.tensor(self.u)
        return ((pred - ag.tensor(self.y)) ** 2).mean()

    def _hessian(self) -> np.ndarray:
        """d²loss/dW², shape (d, k, d, k): the engine's ``functional.hessian`` (private: D2's
        answer on the lesson's network, read by its check only)."""
        return hessian(self.loss, ag.tensor(self.W)).numpy()

    def _hvp(self, v: np.ndarray) -> np.ndarray:
        """H·v by the engine's ``functional.hvp`` (private: D3's answer, for its check only)."""
        return hvp(self.loss, ag.tensor(self.W), ag.tensor(v))[1].numpy()

    def gradient(self) -> np.ndarray:
        """dloss/dW by one ordinary backward."""
        W = ag.tensor(self.W, requires_grad=True)
        self.loss(W).backward()
        return W.grad.numpy()

    @property
    def size(self) -> int:
        """The number of weights in W."""
        return self.W.size


def network(seed: int = 142, n: int = 8, d: int = 3, k: int = 2) -> Network:
    """A network with data of its own: N examples, d inputs, k hidden units."""
    g = rng(seed)
    return Network(X=g.standard_normal((n, d)), W=0.8 * g.standard_normal((d, k)),
                   u=g.standard_normal(k), y=g.standard_normal(n))


def network_problem() -> Problem:
    """D2's data: X, W, u, y of the lesson's network (N = 8, d = 3, k = 2)."""
    net = network()
    return Problem("A network pred = tanh(X @ W) @ u with the loss mean((pred - y)**2): "
                   "X (8, 3), W (3, 2), u (2,), y (8,). D2 asks for d²loss/dW², shape "
                   "(3, 2, 3, 2).", X=net.X, W=net.W, u=net.u, y=net.y)


# -- D4: logistic regression ------------------------------------------------------------------


@dataclass(frozen=True)
class Logistic:
    """mean(log(1 + exp(z)) - y z) + ½ λ |w|², z = X @ w: convex, so Newton's method
    converges from anywhere near, in a handful of steps."""

    X: np.ndarray
    y: np.ndarray
    lam: float = 0.1

    def loss(self, w: ag.Tensor) -> ag.Tensor:
        """The regularised logistic loss of the weights ``w`` (a Tensor)."""
        z = ag.tensor(self.X) @ w
        fit = ((1 + z.exp()).log() - ag.tensor(self.y) * z).mean()
        return fit + 0.5 * self.lam * (w * w).sum()

    def value(self, w: np.ndarray) -> float:
        """The loss at ``w`` as a float."""
        with ag.no_grad():
            return float(self.loss(ag.tensor(np.asarray(w, dtype=np.float64))).item())

    def gradient_and_hessian(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The engine's gradient (one backward) and Hessian (``functional.hessian``) at ``w``."""
        t = ag.tensor(np.array(w, dtype=np.float64), requires_grad=True)
        self.loss(t).backward()
        return t.grad.numpy(), hessian(self.loss, ag.tensor(np.array(w))).numpy()


def logistic(seed: int = 144, n: int = 40, d: int = 3) -> tuple[Logistic, np.ndarray]:
    """Points of two classes in d - 1 dimensions (and a bias column); the start w0."""
    g = rng(seed)
    features = g.standard_normal((n, d - 1))
    X = np.hstack([features, np.ones((n, 1))])
    truth = g.standard_normal(d) * 2
    y = (X @ truth + 0.7 * g.standard_normal(n) > 0).astype(np.float64)
    return Logistic(X, y), 0.5 * g.standard_normal(d)
