"""H2 and H3: batch norm's and softmax cross-entropy's backward, each in one expression,
checked on lesson 13's batch and on a second batch of another size; and the closed forms
with one thing wrong that name a learner's mistake (H1's row of h_pre uses batch norm's).
"""

from __future__ import annotations

import numpy as np

import autograd_core as ag

from ...feedback.context import Mistake
from ...feedback.result import Result
from ..exercise import Exercise, register
from ..function_cases import Derivation, deriving
from ..problems import rng
from .grading import check_one
from .network import _learner_reference, _run_steps

# -- H2: batch norm's backward in one expression ----------------------------------------------


def _bn_mistakes(g, xh, gamma, s) -> list[Mistake]:
    """Closed forms of batch norm's input gradient with one thing wrong, each named."""
    n = len(g)
    m = lambda a, axis=0: a.mean(axis=axis, keepdims=True)  # noqa: E731
    return [
        Mistake(gamma * s * (g - m(g)), "Your answer has the paths through x_hat and through "
                "the mean, but not the path through the variance: the variance is computed "
                "from the same inputs, so each input moves it too.",
                "The variance's path gives the term with x_hat · mean(d · x_hat).",
                "bn_missing_variance"),
        Mistake(gamma * s * (g - xh * m(g * xh)), "Your answer has the path through the "
                "variance but not the one through the mean: each input also moves the batch "
                "mean.", "The mean's path gives the term mean(d).", "bn_missing_mean"),
        Mistake(gamma * s * (g - m(g, 1) - xh * m(g * xh, 1)), "Your sums run over the "
                "features (axis 1). Batch norm's statistics are per feature, over the batch: "
                "axis 0.", "The mean and variance were taken over axis 0.", "wrong_axis"),
        Mistake(gamma * s * (g - m(g) - n / (n - 1) * xh * m(g * xh)), "Your answer uses the "
                "unbiased variance (N - 1); batch norm in training mode divides by N.",
                "bn_var = diff_sq.mean(axis=0): a division by N.", "bessel"),
        Mistake(s * (g - m(g) - xh * m(g * xh)), "Your answer is missing the factor gamma.",
                "bn_out = gamma * x_hat + beta: the way back into x_hat multiplies by gamma.",
                "missing_factor"),
    ]


def _bn_case(n: int, c: int, seed: int) -> tuple[tuple, np.ndarray, dict]:
    """(arguments, engine's dL/dh_pre, context) for batch norm on a random batch."""
    g = rng(seed)
    t = {"h_pre": ag.tensor(g.standard_normal((n, c)) * 2 + 1, requires_grad=True),
         "gamma": ag.tensor(1 + 0.3 * g.standard_normal(c)),
         "beta": ag.tensor(0.3 * g.standard_normal(c))}
    upstream = g.standard_normal((n, c))
    _run_steps(t, "bn_mean", "bn_out")
    (t["bn_out"] * ag.tensor(upstream)).sum().backward()
    args = (upstream, t["x_hat"].numpy(), t["gamma"].numpy(), t["inv_std"].numpy())
    ctx = {"naive": upstream * args[2] * args[3], "mistakes": _bn_mistakes(*args),
           "batch_size": n}
    return args, t["h_pre"].grad.numpy(), ctx


def _lesson_bn_case() -> tuple[tuple, np.ndarray, dict]:
    ref = _learner_reference()
    v, d = ref.values, ref.grads
    args = (d["bn_out"], v["x_hat"], v["gamma"], v["inv_std"])
    return args, d["h_pre"], {"naive": args[0] * args[2] * args[3],
                              "mistakes": _bn_mistakes(*args)}


def _one_expression(label: str, what: str, cases: tuple) -> Derivation:
    """H2's or H3's kind: the learner's ``what`` gives ``label`` (d_<name>) on each case."""
    def compare(out, expected, ctx) -> Result:
        return check_one(label[2:], out, np.asarray(expected), **ctx)[0]

    return Derivation(what, cases, compare, right="one expression for the whole backward.",
                      label=label)


_check_h2 = deriving(_one_expression("d_h_pre", "bn_backward", (
    ("the lesson's batch", _lesson_bn_case),
    ("a second batch (16 examples, 5 features)", lambda: _bn_case(16, 5, 131)))),
    """``H2(bn_backward)``: your ``bn_backward(d_bn_out, x_hat, gamma, inv_std)`` returns
    dL/dh_pre in one expression; checked on the lesson's batch and on another of 16 x 5.""")


# -- H3: softmax cross-entropy's backward -----------------------------------------------------


def _ce_mistakes(logits, y) -> list[Mistake]:
    n = len(y)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    onehot = np.eye(logits.shape[1])[y]
    e0 = np.exp(logits - logits.max(axis=0, keepdims=True))
    return [
        Mistake(probs / n, "Your answer is missing the -1 at each example's own label: the "
                "loss reads log_probs only there.", "Subtract the one-hot of y.",
                "missing_onehot"),
        Mistake(-onehot / n, "Your answer has the one-hot part but not the softmax: every "
                "logit is in the normalising sum, so every logit gets a gradient.",
                "The log-sum-exp's path gives softmax(logits).", "missing_softmax"),
        Mistake((e0 / e0.sum(axis=0, keepdims=True) - onehot) / n, "Your softmax normalises "
                "over the batch (axis 0); each example's probabilities sum to 1 over the "
                "classes: axis 1.", "Softmax runs along the classes.", "wrong_axis"),
        Mistake((probs - 1) / n, "Your answer subtracts 1 from every entry; only each "
                "example's own label gets the -1.", "Subtract the one-hot of y, not 1.",
                "minus_one_everywhere"),
        Mistake((np.log(probs) - onehot) / n, "Your answer uses log-probabilities where the "
                "probabilities themselves (softmax) are needed.", "d/dz log-sum-exp(z) = "
                "softmax(z).", "log_softmax"),
    ]


def _ce_case(logits: np.ndarray, y: np.ndarray) -> tuple[tuple, np.ndarray, dict]:
    t = {"logits": ag.tensor(np.array(logits), requires_grad=True), "y": np.asarray(y)}
    _run_steps(t, "logit_max", "loss")
    t["loss"].backward()
    return ((logits, y), t["logits"].grad.numpy(),
            {"mistakes": _ce_mistakes(logits, y), "batch_size": len(y)})


def _other_ce_case() -> tuple[tuple, np.ndarray, dict]:
    g = rng(132)
    return _ce_case(g.standard_normal((8, 5)) * 3, g.integers(0, 5, 8))


_check_h3 = deriving(_one_expression("d_logits", "ce_backward", (
    ("the lesson's batch", lambda: _ce_case(_learner_reference().values["logits"],
                                            _learner_reference().values["y"])),
    ("a second batch (8 examples, 5 classes)", _other_ce_case))),
    """``H3(ce_backward)``: your ``ce_backward(logits, y)`` returns dL/dlogits of the mean
    cross-entropy in one expression; checked on the lesson's batch and on 8 x 5 logits.""")



register(Exercise("H2", "derivation", {"closed_form": _check_h2}))
register(Exercise("H3", "derivation", {"closed_form": _check_h3}))
