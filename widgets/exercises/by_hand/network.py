"""Lesson 13's network, its forward pass written as named engine ops, and the engine's
reference values and gradients for the current learner's batch.

The network runs on a batch of 32 of the bundled digits (8x8 pixels: 64 features), written
as elementary engine ops so that every intermediate has a name. ``STEPS`` is that forward
pass, one op per row (lesson 13 writes the same lines out in a cell)::

    h_pre = x @ W1                      linear, no bias (batch norm's beta is the bias)
    bn_mean = h_pre.mean(0)             batch norm in training mode: the batch's own
    diff = h_pre - bn_mean              mean and (biased) variance, per feature
    diff_sq = diff ** 2
    bn_var = diff_sq.mean(0)
    var_eps = bn_var + eps
    inv_std = var_eps ** -0.5
    x_hat = diff * inv_std
    bn_out = gamma * x_hat + beta
    h = tanh(bn_out)
    logits = h @ W2 + b2
    logit_max = logits.max(1)           softmax cross-entropy, mean over the batch, with
    shifted = logits - logit_max        the row's max subtracted first (exp cannot
    exps = exp(shifted)                 overflow)
    sum_exp = exps.sum(1)
    log_sum_exp = log(sum_exp)
    log_probs = shifted - log_sum_exp
    picked = log_probs[i, y_i]
    loss = -mean(picked)

``reference()`` is that batch through the engine: every value and every row's ``.grad``,
the expected values of H1–H4 (never a number written by hand).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

import autograd_core as ag
from autograd_core import Tensor

from ... import gate
from ..problems import Problem, rng

BATCH, FEATURES, HIDDEN, CLASSES = 32, 64, 64, 10
EPS = 1e-5
TRAIN_STEPS = 300
PARAMS = ("W1", "gamma", "beta", "W2", "b2")


@dataclass(frozen=True)
class Step:
    """One op of the forward pass: ``name = fn(*inputs)``, inputs named."""

    name: str
    inputs: tuple[str, ...]
    fn: Callable


STEPS: tuple[Step, ...] = (
    Step("h_pre", ("x", "W1"), lambda x, w: x @ w),
    Step("bn_mean", ("h_pre",), lambda a: a.mean(dim=0, keepdim=True)),
    Step("diff", ("h_pre", "bn_mean"), lambda a, m: a - m),
    Step("diff_sq", ("diff",), lambda d: d ** 2),
    Step("bn_var", ("diff_sq",), lambda s: s.mean(dim=0, keepdim=True)),
    Step("var_eps", ("bn_var",), lambda v: v + EPS),
    Step("inv_std", ("var_eps",), lambda v: v ** -0.5),
    Step("x_hat", ("diff", "inv_std"), lambda d, s: d * s),
    Step("bn_out", ("gamma", "x_hat", "beta"), lambda g, xh, b: g * xh + b),
    Step("h", ("bn_out",), lambda z: z.tanh()),
    Step("logits", ("h", "W2", "b2"), lambda h, w, b: h @ w + b),
    Step("logit_max", ("logits",), lambda z: z.max(dim=1, keepdim=True).values),
    Step("shifted", ("logits", "logit_max"), lambda z, m: z - m),
    Step("exps", ("shifted",), lambda s: s.exp()),
    Step("sum_exp", ("exps",), lambda e: e.sum(dim=1, keepdim=True)),
    Step("log_sum_exp", ("sum_exp",), lambda s: s.log()),
    Step("log_probs", ("shifted", "log_sum_exp"), lambda s, l: s - l),
    Step("picked", ("log_probs", "y"), lambda lp, y: lp[np.arange(len(y)), y]),
    Step("loss", ("picked",), lambda p: -p.mean()),
)
INTERMEDIATES = tuple(s.name for s in STEPS[:-1])


def _backward_order() -> tuple[str, ...]:
    """Intermediates from the loss back, each parameter right after the op that uses it."""
    rows: list[str] = []
    for step in reversed(STEPS[:-1]):
        rows += [step.name, *(i for i in step.inputs if i in PARAMS)]
    return tuple(rows)


ROWS = _backward_order()  # the order a learner writes them, and the table's

def _description(batch: int = BATCH) -> str:
    return (f"A batch of {batch} digits through linear -> batch norm (training mode) -> tanh "
            f"-> linear -> softmax cross-entropy (mean over the batch): x ({batch}, 64) pixels "
            f"in [0, 1], y ({batch},) labels 0-9, eps, the parameters W1 (64, 64), gamma and "
            "beta (64,), W2 (64, 10), b2 (10,), and every value of the forward pass by name "
            "(p.h_pre ... p.picked, p.loss).")


DESCRIPTION = _description()




def _run_steps(t: dict, first: str = "h_pre", last: str = "loss", *, keep: bool = True) -> dict:
    """Run ``STEPS`` from ``first`` to ``last`` on the tensors in ``t`` (by name), adding
    each output, named; with ``keep`` every intermediate keeps its ``.grad`` after backward."""
    names = [s.name for s in STEPS]
    for step in STEPS[names.index(first):names.index(last) + 1]:
        out = step.fn(*(t[i] for i in step.inputs)).named(step.name)
        if keep and step.name != "loss":
            out.retain_grad()
        t[step.name] = out
    return t


def _forward(values: Mapping, *, keep: bool = True) -> dict:
    """The network on ``values`` (``x``, ``y`` and the parameters, arrays or tensors): every
    tensor by name. Parameters given as arrays become fresh leaves that require grad.

    >>> t = _forward(problem())                      # doctest: +SKIP
    >>> t["loss"].backward(); t["h_pre"].grad.shape  # doctest: +SKIP
    (32, 64)
    """
    t = {"x": ag.tensor(np.asarray(values["x"])).named("x"), "y": np.asarray(values["y"])}
    for name in PARAMS:
        v = values[name]
        t[name] = v if isinstance(v, Tensor) else ag.tensor(np.array(v), requires_grad=True)
        t[name].named(name)
    return _run_steps(t, keep=keep)


@functools.cache
def _digits() -> tuple[np.ndarray, np.ndarray]:
    """The training images flattened to 64 features, and their labels (read-only)."""
    from widgets.lessons.digits import load_data  # lesson 12's loader: no download

    data = load_data(dtype=np.float64)
    x = data.x_train.numpy().reshape(len(data.y_train), FEATURES).copy()
    y = data.y_train.numpy().copy()
    x.flags.writeable = y.flags.writeable = False
    return x, y


def _key() -> int:
    """Which learner the numbers are drawn for (``problems.rng`` knows); a cache key."""
    return int(rng(130).integers(2 ** 62))


@functools.lru_cache(maxsize=4)
def _setup(key: int, steps: int = TRAIN_STEPS) -> tuple[dict, list[np.ndarray]]:
    """The starting parameters and the rows of every training batch (the first is H1's)."""
    g = rng(130)
    n = len(_digits()[1])
    start = {"W1": g.standard_normal((FEATURES, HIDDEN)) / 8,
             "gamma": 1 + 0.2 * g.standard_normal(HIDDEN),
             "beta": 0.2 * g.standard_normal(HIDDEN),
             "W2": g.standard_normal((HIDDEN, CLASSES)) / 8,
             "b2": 0.1 * g.standard_normal(CLASSES)}
    batches = [g.choice(n, BATCH, replace=False) for _ in range(steps)]
    return start, batches


@dataclass(frozen=True)
class Reference:
    """One batch through the engine: every value by name, and the engine's gradient of every
    row (``ROWS``)."""

    values: Mapping[str, np.ndarray]
    grads: Mapping[str, np.ndarray]


def _frozen(a) -> np.ndarray:
    a = np.array(a)
    a.flags.writeable = False
    return a


@gate.answers("H1")
def reference_for(values: Mapping) -> Reference:
    """Run the network on ``values`` (x, y, parameters) with recording, then backward. It
    computes every gradient H1 asks for: before H1 is solved, a call counts as seeing H1's
    solution."""
    return _through_engine(values)


def _through_engine(values: Mapping) -> Reference:
    t = _forward(values)
    t["loss"].backward()
    out = {k: _frozen(v.numpy() if isinstance(v, Tensor) else v) for k, v in t.items()}
    grads = {r: _frozen(t[r].grad.numpy()) for r in ROWS}
    # Softmax does not change when every logit of a row moves by the same amount, so
    # dL/dlogit_max is exactly 0; what the engine holds there is rounding (~1e-17).
    scale = float(np.abs(grads["shifted"]).max())
    if float(np.abs(grads["logit_max"]).max()) <= 1e-12 * scale:
        grads["logit_max"] = _frozen(np.zeros_like(grads["logit_max"]))
    return Reference(out, grads)


@functools.lru_cache(maxsize=8)  # the learner's batch, and a few drawn at check time
def _reference(key: int, batch: int = BATCH) -> Reference:
    """The first training batch through the engine; for another ``batch`` size, that many
    other digits (drawn for the same ``key``) with the same starting parameters."""
    start, batches = _setup(key)
    x, y = _digits()
    rows = batches[0] if batch == BATCH else np.random.default_rng([key, batch]).choice(
        len(y), batch, replace=False)
    return _through_engine({"x": x[rows], "y": y[rows], **start})


@gate.answers("H1")
def reference() -> Reference:
    """The lesson's batch (H1's problem) through the engine, for the current learner: its
    ``.grads`` are H1's answers, so before H1 is solved a call counts as seeing H1's
    solution."""
    return _learner_reference()


def _learner_reference() -> Reference:
    """:func:`reference` for the checks, which grade with it (nothing is recorded)."""
    return _reference(_key())


def problem(batch: int = BATCH) -> Problem:
    """H1's data: x, y, eps, the parameters and every forward value, by name (read-only);
    ``batch``: another batch of that many digits (2 to 256), for a lesson's demonstration.
    Inside :func:`..problems.unseen` it is a batch and a start nobody was given."""
    if isinstance(batch, bool) or not isinstance(batch, int | np.integer) or not 2 <= batch <= 256:
        raise ValueError(f"H1 has batches of 2 to 256 digits, not {batch!r}.")
    v = _reference(_key(), int(batch)).values
    return Problem(_description(int(batch)), x=v["x"], y=v["y"], eps=EPS,
                   **{k: v[k] for k in (*PARAMS, *INTERMEDIATES)}, loss=float(v["loss"]))


def values_of(p: Mapping) -> dict:
    """What the network runs on, from a problem: x, y and the five parameters."""
    return {k: p[k] for k in ("x", "y", *PARAMS)}
