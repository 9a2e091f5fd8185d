"""What a write-the-backward exercise checks an op against: one :class:`BackwardSpec` per op.

A spec gives the op's formula, a reference built from engine ops (or the engine's own
functional op), seeded inputs, the non-tensor parameters it takes (an epsilon, a padding,
integer targets, a random generator), the names of its gradients, and the wrong answers
a learner's backward tends to give, each with the sentence that names it.

The lessons' layers (conv2d, max pooling with ties, batch norm with dγ and dβ, dropout,
softmax with cross-entropy) are here beside the first exercises' small ops (softplus,
sigmoid, layer norm). ``backward_check`` runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import autograd_core as ag
from autograd_core.nn import functional as F

from ..feedback.context import Mistake
from .layer_items import _batch_norm_dx_mistakes
from .problems import Problem, rng


@dataclass(frozen=True)
class BackwardSpec:
    """An op to write: its formula, a reference built from engine ops, seeded inputs.

    ``inputs()`` gives the tensor inputs (float64 arrays); ``params`` the fixed keyword
    parameters; ``data()`` seeded keyword parameters drawn afresh for every run (integer
    targets, a random generator: the learner's run and the reference see the same
    values); ``grads`` names each input's gradient in the feedback. ``_mistakes(arrays, g,
    params)`` gives known wrong answers: a list (for every gradient) or a dict by gradient
    name; ``naive`` is batch norm's "through x̂ only" for the first input.
    """

    name: str
    formula: str
    reference: Callable  # (*tensors, **params) -> Tensor, built from engine ops
    inputs: Callable[[], tuple]  # seeded float64 arrays
    params: dict = field(default_factory=dict)
    saves_only_output: bool = False  # and ``no_new`` names what backward may not recompute
    # (arrays, g, params) -> list | dict of Mistake. Private: a slip's candidate is the
    # answer up to that slip, read only by the check (``backward_check``)
    _mistakes: Callable | None = None
    naive: Callable | None = None  # (arrays, g, params) -> array (normalisation only)
    data: Callable[[], dict] | None = None  # seeded parameters, drawn for each run
    grads: tuple[str, ...] = ()
    # NumPy functions backward may not call on what it read (sigmoid's: no new exp)
    no_new: tuple[str, ...] = ()


def gradient_names(n_inputs: int, spec: BackwardSpec | None = None) -> list[str]:
    """The name of each input's gradient in the feedback: the spec's ``grads``, else dx for
    one input and d(input i) for several.

    >>> gradient_names(2)
    ['d(input 0)', 'd(input 1)']
    """
    if spec is not None and len(spec.grads) == n_inputs:
        return list(spec.grads)
    return ["dx"] if n_inputs == 1 else [f"d(input {i})" for i in range(n_inputs)]


def _engine_grads(op: Callable, arrays: tuple, g: np.ndarray) -> list[np.ndarray]:
    """The engine's gradient of ``op(*arrays)`` for upstream ``g`` (for building mistakes)."""
    tensors = [ag.tensor(a, requires_grad=True) for a in arrays]
    op(*tensors).backward(g)
    return [t.grad.numpy() for t in tensors]


# -- softplus, sigmoid, layer norm (lessons 03 and 04) ---------------------------------------


def _softplus_mistakes(arrays, g, params):
    (x,) = arrays
    s = 1 / (1 + np.exp(-x))
    return [Mistake(g * (1 - s), "Your backward uses σ(−x) = 1 − σ(x): the sign inside the "
                    "sigmoid is flipped.", "d/dx log(1 + eˣ) = eˣ / (1 + eˣ).", "sign_inside")]


def _sigmoid_mistakes(arrays, g, params):
    (x,) = arrays
    s = 1 / (1 + np.exp(-x))
    return [Mistake(g * s, "Your backward multiplies by σ only: one factor of σ' is missing.",
                    "",
                    "missing_factor")]


def _layer_norm_naive(arrays, g, params):
    (x,) = arrays
    return g / np.sqrt(x.var(axis=-1, keepdims=True) + params["eps"])


def _layer_norm_reference(x, eps=1e-5):
    centered = x - x.mean(dim=-1, keepdim=True)
    return centered / ag.sqrt(x.var(dim=-1, keepdim=True, correction=0) + eps)


# -- conv2d (lesson 07) ------------------------------------------------------------------------


def _conv_mistakes(arrays, g, params):
    x, w = arrays

    def conv(x_, w_, g_):
        return _engine_grads(lambda a, b: F.conv2d(a, b, padding=params["padding"]),
                             (x_, w_), g_)

    dx, dw = conv(x, w, g)
    n, o = x.shape[0], w.shape[0]
    rotate = "Only dx reads the kernel backwards; dw correlates the input with g as it is."
    return {
        "dx": [Mistake(conv(x, w[..., ::-1, ::-1], g)[0],
                       "Your dx slides the kernel over g as it is. Output (p, q) reads input "
                       "(p + i, q + j) with weight (i, j), so seen from the input the kernel "
                       "index runs backwards: dx needs the kernel rotated by 180°.",
                       "Flip w in both spatial directions (w[..., ::-1, ::-1]) for dx, or "
                       "scatter each g entry times w onto its window.", "unrotated_kernel"),
               *(Mistake(conv(x, w[k:k + 1], g[:, k:k + 1])[0],
                         f"Your dx holds what one output channel sends back (of {o}). Every "
                         "output channel read every input channel, so dx adds up what all of "
                         "them send.", "Sum over the output channels o: dx[n, c] collects "
                         "g[n, o] with w[o, c] for every o.", "one_output_channel")
                 for k in range(o))],
        "dw": [*(Mistake(conv(x[k:k + 1], w, g[k:k + 1])[1],
                         f"Your dw holds the contribution of one image (of {n}). Every image "
                         "of the batch used the same kernel, so dw adds up all of theirs.",
                         "Sum over the batch axis n (an assignment in a loop over n keeps "
                         "only the last image: add instead).", "missing_batch_sum")
                 for k in range(n)),
               Mistake(dw / n, f"Your dw is the batch mean of the images' contributions, N = "
                       f"{n} times too small: the kernel's gradient is their sum.",
                       "Sum over n, do not average: the loss already has whatever mean it "
                       "takes in g.", "batch_mean"),
               Mistake(dw[..., ::-1, ::-1], "Your dw is rotated by 180°. " + rotate,
                       "dw[o, c, i, j] sums g[n, o, p, q] · x_pad[n, c, p + i, q + j].",
                       "rotated_dw")],
    }


# -- max pooling with ties (lesson 07) ---------------------------------------------------------


def _pool_input() -> tuple:
    """Small integers, so windows tie often, and a tie of each size placed on purpose."""
    x = rng(45).integers(0, 4, (2, 2, 4, 4)).astype(np.float64)
    x[0, 0, :2, :2] = [[3, 1], [0, 3]]  # two maxima, on a diagonal
    x[0, 1, :2, 2:] = [[2, 2], [2, 1]]  # three
    x[1, 0, 2:, 2:] = 1.0  # four
    x[1, 1, 2:, :2] = [[0, 2], [2, 0]]  # two, the other diagonal
    return (x,)


def _pool_windows(x: np.ndarray) -> np.ndarray:
    """The 2×2 windows (stride 2) of (N, C, H, W) as (N, C, H/2, W/2, 4), row-major."""
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(
        n, c, h // 2, w // 2, 4)


def _pool_mistakes(arrays, g, params):
    (x,) = arrays
    win = _pool_windows(x)
    tied = win == win.max(axis=-1, keepdims=True)
    last = np.zeros_like(tied)
    np.put_along_axis(last, 3 - np.argmax(tied[..., ::-1], axis=-1)[..., None], True, axis=-1)
    n, c, h, w = x.shape

    def back(share):  # each window's share of its g, put back where the window came from
        return (share * g[..., None]).reshape(n, c, h // 2, w // 2, 2, 2).transpose(
            0, 1, 2, 4, 3, 5).reshape(x.shape)

    rule = ("max_pool2d gives a tied window's whole gradient to its first maximum in "
            "row-major order (what np.argmax returns; PyTorch does the same).")
    return [
        Mistake(back(tied), "Your dx gives the whole gradient of a tied window to every one "
                "of its maxima, so such a window sends back more gradient than it received. "
                + rule, "Keep one winner per window: np.argmax picks the first.", "tie_all"),
        Mistake(back(tied / tied.sum(axis=-1, keepdims=True)), "Your dx splits a tied "
                "window's gradient equally among its maxima: that is the rule of `maximum` "
                "and of the `max` reduction, not of max pooling. " + rule,
                "One winner per window: np.argmax picks the first.", "tie_split"),
        Mistake(back(last), "Your dx gives a tied window's gradient to its last maximum. "
                + rule, "np.argmax returns the first maximum; a comparison like >= while "
                "scanning keeps the last.", "tie_last"),
    ]


# -- batch norm, training mode, with dγ and dβ (lesson 08) -------------------------------------


def _bn_reference(x, gamma, beta, eps=1e-5):
    return F.batch_norm(x, None, None, gamma, beta, training=True, eps=eps)


def _bn_mistakes(arrays, g, params):
    x, gamma, beta = arrays
    xhat = (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + params["eps"])
    n = x.shape[0]
    one = "Sum over the batch axis (axis=0): every example's term adds up."

    def each_example(terms, name, what):
        return [Mistake(terms[k], f"Your {name} holds one example's term (of {n}): {what} is "
                        "shared by every example of the batch, so its gradient adds up all "
                        "of theirs.", one, "missing_batch_sum") for k in (0, n - 1)]

    problem = Problem("", x=x, gamma=gamma, beta=beta, G=g, eps=params["eps"])
    return {
        "dx": _batch_norm_dx_mistakes(problem),
        "dgamma": [Mistake((g * xhat).mean(axis=0), "Your dgamma averages over the batch; "
                           "γ is used by every example, so its gradient is the sum.", one,
                           "batch_mean"),
                   Mistake(g.sum(axis=0), "Your dgamma is dbeta's formula. γ multiplies x̂, "
                           "so each example's term carries its x̂.", "What does γ multiply "
                           "in the forward pass? Its gradient carries that factor.",
                           "missing_xhat"),
                   Mistake((g * x).sum(axis=0), "Your dgamma multiplies g by x. γ multiplies "
                           "the normalised x̂, not the raw input.", "Which array does forward "
                           "scale by γ: the input, or what the normalisation made of it?",
                           "raw_input"),
                   *each_example(g * xhat, "dgamma", "γ")],
        "dbeta": [Mistake(g.mean(axis=0), "Your dbeta averages over the batch; β is added to "
                          "every example, so its gradient is the sum.", one, "batch_mean"),
                  Mistake((g * xhat).sum(axis=0), "Your dbeta is dgamma's formula. β is "
                          "added as it is, so its gradient is g alone, summed.", "What does "
                          "an add hand back to each of its inputs?", "has_xhat"),
                  *each_example(g, "dbeta", "β")],
    }


def _bn_naive(arrays, g, params):
    x, gamma, _ = arrays
    return g * gamma / np.sqrt(x.var(axis=0) + params["eps"])


# -- dropout with a seeded mask (lesson 08) ----------------------------------------------------


def _dropout_data() -> dict:
    return {"generator": rng(47)}  # a fresh stream each run: the same masks every run


def _keep(x_shape: tuple, p: float, generator) -> np.ndarray:
    """The mask forward draws: keep where a uniform draw is at least p."""
    return generator.random(x_shape) >= p


def _dropout_reference(x, p, generator):
    return x * ag.tensor(_keep(x.shape, p, generator).astype(np.float64)) / (1 - p)


def _dropout_mistakes(arrays, g, params):
    (x,) = arrays
    p, generator = params["p"], params["generator"]
    keep, again = _keep(x.shape, p, generator), _keep(x.shape, p, generator)
    fresh = ("Your backward draws a new mask, so it lets the gradient through other entries "
             "than forward kept. An entry forward dropped did not reach the output at all.")
    save = "Save the mask in forward (ctx.save(keep=keep)) and read it back in backward."
    return [
        Mistake(g * keep, "Your dx keeps the right entries but forgets the 1/(1 − p): forward "
                "scaled every kept entry by it, so its gradient carries the same factor.",
                "Backward does to g what forward did to x: list everything forward multiplied "
                "a kept entry by.", "missing_keep_scale"),
        Mistake(g * again / (1 - p), fresh, save, "fresh_mask"),
        Mistake(g * again, fresh + " (It also forgets the 1/(1 − p).)", save, "fresh_mask"),
        Mistake(g / (1 - p), "Your dx lets the gradient through every entry. A "
                "dropped entry was multiplied by 0, so its gradient is 0.",
                "Which entries of x reached the output at all? g goes back through those only.",
                "missing_mask"),
    ]


# -- softmax with cross-entropy, mean over the batch (lesson 08) -------------------------------


def _ce_data() -> dict:
    return {"target": rng(49).integers(0, 4, 5)}


def _ce_mistakes(arrays, g, params):
    (logits,) = arrays
    target = params["target"]
    n = len(target)

    def softmax(a, axis):
        e = np.exp(a - a.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    probs = softmax(logits, 1)
    one_hot = np.eye(logits.shape[1])[target]
    mean = "How does a mean over the batch weigh each example's term?"
    sign = "Does raising the target's logit raise the loss or lower it?"
    return [
        Mistake(g * (probs - one_hot), f"Your dlogits is N = {n} times too large: the loss is "
                "the mean over the batch, so each example's share carries 1/N.", mean,
                "batch_factor"),
        Mistake(g * probs / n, "Your dlogits is the softmax alone: the target's −log p has "
                "a second term, −1 at the target class (subtract the one-hot target).",
                "Differentiate −log p_target logit by logit: the log-sum-exp gives one term; "
                "what does the target's own logit add?", "missing_one_hot"),
        Mistake(g * (one_hot - probs) / n, "Your dlogits has the wrong sign: raising the "
                "target's logit lowers the loss, so its gradient there must be negative.",
                sign, "sign"),
        Mistake(g * (one_hot - probs), "Your dlogits has two mistakes: the wrong sign "
                f"(raising the target's logit lowers the loss), and it is N = {n} times too "
                "large (the loss is a mean over the batch).", f"{sign} {mean}",
                "sign+batch_factor"),
        Mistake(g * (softmax(logits, 0) - one_hot) / n, "Your softmax runs over the batch "
                "axis (axis 0); each example's probabilities are over its classes (axis 1).",
                "Over which axis does one example's softmax add up to 1?", "wrong_axis"),
    ]


SPECS: dict[str, BackwardSpec] = {
    "softplus": BackwardSpec(
        "softplus", "f(x) = log(1 + exp(x))", lambda x: ag.log(1 + ag.exp(x)),
        lambda: (rng(41).standard_normal((3, 4)) * 2,), _mistakes=_softplus_mistakes),
    "sigmoid": BackwardSpec(
        "sigmoid", "f(x) = 1 / (1 + exp(-x)), backward from the saved output only",
        ag.sigmoid, lambda: (rng(42).standard_normal((3, 4)) * 2,), saves_only_output=True,
        _mistakes=_sigmoid_mistakes, no_new=("exp", "exp2", "expm1", "log", "log1p", "tanh",
                                            "power of a constant")),
    "layer_norm": BackwardSpec(
        "layer_norm", "f(x) = (x - mean(x)) / sqrt(var(x) + eps) over the last axis",
        _layer_norm_reference, lambda: (rng(43).standard_normal((4, 5)) * 3 + 1,),
        params={"eps": 1e-5}, naive=_layer_norm_naive),
    "conv2d": BackwardSpec(
        "conv2d", "out = conv2d(x, w), stride 1, zero padding 1, no bias",
        lambda x, w, padding: F.conv2d(x, w, padding=padding),
        lambda: (rng(44).standard_normal((2, 2, 5, 5)), rng(46).standard_normal((3, 2, 3, 3))),
        params={"padding": 1}, _mistakes=_conv_mistakes, grads=("dx", "dw")),
    "max_pool2d": BackwardSpec(
        "max_pool2d", "out = max over each 2×2 window, stride 2; a tie goes to the first "
        "maximum in row-major order", lambda x: F.max_pool2d(x, 2), _pool_input,
        _mistakes=_pool_mistakes, grads=("dx",)),
    "batch_norm": BackwardSpec(
        "batch_norm", "y = gamma · (x - mean) / sqrt(var + eps) + beta per feature, with the "
        "batch's own mean and biased variance", _bn_reference,
        lambda: (rng(48).standard_normal((6, 4)) * 2 + 1, rng(50).standard_normal(4),
                 rng(51).standard_normal(4)),
        params={"eps": 1e-5}, _mistakes=_bn_mistakes, naive=_bn_naive,
        grads=("dx", "dgamma", "dbeta")),
    "dropout": BackwardSpec(
        "dropout", "y = x · mask / (1 - p), mask drawn from the generator it is given",
        _dropout_reference, lambda: (rng(52).standard_normal((5, 6)),), params={"p": 0.4},
        data=_dropout_data, _mistakes=_dropout_mistakes, grads=("dx",)),
    "softmax_cross_entropy": BackwardSpec(
        "softmax_cross_entropy", "loss = mean over the batch of -log softmax(logits)[target]",
        lambda logits, target: F.cross_entropy(logits, target),
        lambda: (rng(53).standard_normal((5, 4)) * 2,), data=_ce_data, _mistakes=_ce_mistakes,
        grads=("dlogits",)),
}
