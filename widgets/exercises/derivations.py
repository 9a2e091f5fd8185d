"""Derivation checks: a learner's hand-derived gradient against the engine's.

Every expected value here is computed by running the engine on the problem's data
(never written down by hand); the wrong answers worth naming are built from the
same data so that the feedback can say *which* mistake was made.

G5 (3-layer MLP), G6 (matmul), G7 (conv2d), G13 (a loss's reduction over a padded
batch); G8, G9 and G14 live
in ``layer_items``.
"""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.nn.functional import conv2d

from ..feedback.context import Mistake
from ..feedback.result import Result, named
from . import mlp
from .array_answers import Gradients, gradients
from .exercise import Exercise, register
from .problems import Problem, rng

# -- G5: a 3-layer MLP --------------------------------------------------------------------


_check_g5 = gradients(Gradients("G5", mlp.PARTS, mlp.problem, mlp._engine_gradients, mlp._context),
                      """``G5(my_g5)``: your ``my_g5(p) -> {"dW2": ..., "db2": ...,
                      "delta1": ...}`` on ``G5.problem()`` (any subset of the three).""")


register(Exercise("G5", "derivation", {"gradients": _check_g5}, level="M", problem=mlp.problem))


# -- G6: C = A @ B --------------------------------------------------------------------------


def g6_problem(square: bool = False) -> Problem:
    """A (2, 3), B (3, 4) and the upstream gradient G = dL/dC (2, 4); 3x3 when ``square``."""
    g = rng(6)
    m, k, n = (3, 3, 3) if square else (2, 3, 4)
    return Problem("C = A @ B; G = dL/dC is the upstream gradient. Find dA = dL/dA and "
                   "dB = dL/dB.", A=g.standard_normal((m, k)), B=g.standard_normal((k, n)),
                   G=g.standard_normal((m, n)))


def _g6_engine(p: Problem) -> dict:
    a, b = ag.tensor(p.A, requires_grad=True), ag.tensor(p.B, requires_grad=True)
    (a @ b).backward(p.G)
    return {"dA": a.grad, "dB": b.grad}


def _g6_context(p: Problem, right: dict) -> dict:
    ones = np.ones_like(p.G)
    missing = "You multiplied by a matrix of ones instead of the upstream gradient G."
    same = ("The shapes agree only because the matrices are square, so a shape check "
            "cannot catch this one.")
    shapes = "Work the same formula on the non-square problem: the shapes decide it."
    context = {
        "dA": dict(of="A", mistakes=[
            Mistake(ones @ p.B.T, missing, "G is dL/dC: it belongs in the product.",
                    "missing_upstream")]),
        "dB": dict(of="B", mistakes=[
            Mistake(p.A.T @ ones, missing, "G is dL/dC: it belongs in the product.",
                    "missing_upstream")]),
    }
    if p.A.shape == p.B.shape:  # only a square problem lets these products have the right shape
        context["dA"]["mistakes"] += [
            Mistake(p.G @ p.B, f"Your dA uses B where its transpose is needed. {same}",
                    shapes, "missing_transpose"),
            Mistake(p.B.T @ p.G, "Your dA has its two factors in the wrong order "
                    f"(matrix products do not commute). {same}", shapes, "factor_order"),
            Mistake(p.B @ p.G, "Your dA has its factors in the wrong order, and uses B "
                    f"where its transpose is needed. {same}", shapes, "factor_order")]
        context["dB"]["mistakes"] += [
            Mistake(p.A @ p.G, f"Your dB uses A where its transpose is needed. {same}",
                    shapes, "missing_transpose"),
            Mistake(p.G @ p.A.T, "Your dB has its two factors in the wrong order "
                    f"(matrix products do not commute). {same}", shapes, "factor_order"),
            Mistake(p.G @ p.A, "Your dB has its factors in the wrong order, and uses A "
                    f"where its transpose is needed. {same}", shapes, "factor_order")]
    return context


def _g6_label(result: Result, p: Problem) -> Result:
    # the bank checks G6 on non-square shapes: the square problem's parts are extra
    return named(result, f"{result.name} (square)") if p.A.shape == p.B.shape else result


_check_g6 = gradients(Gradients(
    "G6", ("dA", "dB"), g6_problem, _g6_engine, _g6_context, options={"square": False},
    label=_g6_label),
    """``G6(my_g6)``: your ``my_g6(p) -> {"dA": ..., "dB": ...}`` on ``G6.problem()``;
    ``square=True`` runs it on ``problem(square=True)``.""")


register(Exercise("G6", "derivation", {"gradients": _check_g6}, level="M", problem=g6_problem))


# -- G7: conv2d -----------------------------------------------------------------------------


G7_DEFAULT = {"stride": 1, "padding": 0}  # problem() and the check agree: conv2d's defaults
G7_STRIDED = {"stride": 2, "padding": 1}  # the bank checks G7 with stride and padding too
_G7_VARIANTS = ((1, 0), (1, 1), (2, 0), (2, 1))


def g7_part(answer: str, stride: int, padding: int) -> str:
    """The name of one answer of one G7 problem: 'dx', or 'dx (stride=2, padding=1)'."""
    if (stride, padding) == (G7_DEFAULT["stride"], G7_DEFAULT["padding"]):
        return answer
    return f"{answer} (stride={stride}, padding={padding})"


def g7_problem(stride: int = 1, padding: int = 0) -> Problem:
    """x (2, 2, 5, 5), kernel w (3, 2, 3, 3) and the upstream gradient G of the output
    (2, 3, OH, OW), with the problem's ``stride`` (1 or 2) and ``padding`` (0 or 1)."""
    counts = all(isinstance(v, int | np.integer) and not isinstance(v, bool)
                 for v in (stride, padding))
    if not counts or (stride, padding) not in _G7_VARIANTS:
        raise ValueError("G7 has problems for stride 1 or 2 and padding 0 or 1.")
    # each problem its own data: the engine run on another problem shows nothing of yours
    g = rng(7) if (stride, padding) == (1, 0) else rng(700 + 10 * stride + padding)
    x, w = g.standard_normal((2, 2, 5, 5)), g.standard_normal((3, 2, 3, 3))
    size = (5 + 2 * padding - 3) // stride + 1
    check = "G7(my_g7)" if (stride, padding) == (1, 0) else \
        f"G7(my_g7, stride={stride}, padding={padding})"
    return Problem(f"y = conv2d(x, w, stride={stride}, padding={padding}) (cross-correlation, "
                   "like every deep-learning library); G = dL/dy. Find dx and dw with a "
                   f"function my_g7(p) of the problem, and check it with {check}.",
                   x=x, w=w, G=g.standard_normal((2, 3, size, size)), stride=stride,
                   padding=padding)


def _conv_grads(p: Problem, w: np.ndarray, g: np.ndarray | None = None, *,
                stride: int | None = None, padding: int | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """The engine's dx and dw of conv2d(p.x, w) (``p``'s stride and padding unless given)
    for the upstream gradient ``g`` (``p.G`` unless given)."""
    stride = p.stride if stride is None else stride
    padding = p.padding if padding is None else padding
    x_t, w_t = ag.tensor(p.x, requires_grad=True), ag.tensor(w, requires_grad=True)
    conv2d(x_t, w_t, stride=stride, padding=padding).backward(p.G if g is None else g)
    return x_t.grad.numpy(), w_t.grad.numpy()


def _g7_engine(p: Problem) -> dict:
    dx, dw = _conv_grads(p, p.w)
    return {"dx": dx, "dw": dw}


def _stride_one_placement(p: Problem) -> tuple[np.ndarray, np.ndarray]:
    """dx and dw written with the stride left out of the indices: each output position p
    reads input rows p..p+2 instead of p·s..p·s+2 (G not spread out with zeros)."""
    pad = p.padding
    xp = np.pad(p.x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp, dw = np.zeros_like(xp), np.zeros_like(p.w)
    ho, wo = p.G.shape[2:]
    size = p.x.shape[2]
    for i in range(3):
        for j in range(3):
            win = xp[:, :, i:i + ho, j:j + wo]
            dw[:, :, i, j] = np.einsum("nopq,ncpq->oc", p.G, win)
            dxp[:, :, i:i + ho, j:j + wo] += np.einsum("nopq,oc->ncpq", p.G, p.w[:, :, i, j])
    return dxp[:, :, pad:pad + size, pad:pad + size], dw


def _g7_mistakes(p: Problem, dx: np.ndarray, dw: np.ndarray) -> dict[str, list[Mistake]]:
    # dx is linear in the kernel: the engine's dx for the flipped kernel is exactly
    # "the full convolution with the kernel NOT rotated".
    dx_unrotated, _ = _conv_grads(p, p.w[..., ::-1, ::-1])
    found = {
        "dx": [Mistake(dx_unrotated, "Your dx uses the kernel without rotating it by 180°.",
                       "dx is the full convolution of G with the kernel rotated 180° (flipped "
                       "in both spatial axes), spread back with the stride and cropped by the "
                       "padding.", "unrotated_kernel")],
        "dw": [Mistake(dw[..., ::-1, ::-1], "Your dw is rotated by 180°: correlate the (padded) "
                                           "input with G, do not convolve.",
                       "dw[o, c, i, j] sums G[n, o, p, q] times the input pixel that kernel "
                       "entry (i, j) met at output position (p, q).", "rotated_kernel_grad")],
    }
    n_out = p.G.shape[1]
    for o in range(n_out):
        only = np.zeros_like(p.G)
        only[:, o] = p.G[:, o]
        found["dx"].append(Mistake(
            _conv_grads(p, p.w, only)[0], f"Your dx collects the gradient of only one output "
            f"channel (channel {o}); every one of the {n_out} output channels used x, so each "
            "sends its gradient back and they add up.", "Sum over the output channels o.",
            "one_output_channel"))
    for n in range(p.x.shape[0]):
        one = np.zeros_like(p.G)
        one[n] = p.G[n]
        found["dw"].append(Mistake(
            _conv_grads(p, p.w, one)[1], f"Your dw holds the contribution of example {n} "
            "only: the kernel is shared by every example of the batch, so dw sums over the "
            "batch.", "Sum over the batch axis n as well as the output positions.",
            "missing_batch_sum"))
    if p.stride > 1:
        dx1, dw1 = _stride_one_placement(p)
        found["dx"].append(Mistake(dx1, "Your dx sends each output position's gradient back "
                                        "as if the stride were 1: with stride s, output "
                                        "position p came from input rows p·s … p·s + 2. (In "
                                        "the full-convolution picture: spread G out with "
                                        "s − 1 zeros between its entries first.)", "",
                                   "stride_not_spread"))
        found["dw"].append(Mistake(dw1, "Your dw reads the input windows as if the stride "
                                        "were 1: with stride s, output position p saw input "
                                        "rows p·s … p·s + 2.", "", "stride_not_spread"))
    for part, grads in _other_settings(p).items():
        found[part] += grads
    return found


def _other_settings(p: Problem) -> dict[str, list[Mistake]]:
    """The right gradients of this problem's x, w and G under another G7 stride and padding
    whose output has G's shape (a function that fixes them instead of reading p's)."""
    found: dict[str, list[Mistake]] = {"dx": [], "dw": []}
    for stride, padding in _G7_VARIANTS:
        size = (p.x.shape[2] + 2 * padding - 3) // stride + 1
        if (stride, padding) == (p.stride, p.padding) or size != p.G.shape[2]:
            continue
        grads = dict(zip(("dx", "dw"), _conv_grads(p, p.w, stride=stride, padding=padding)))
        for part, wrong in grads.items():
            found[part].append(Mistake(
                wrong, f"Your {part} is right for stride={stride}, padding={padding}, but this "
                f"problem has stride={p.stride}, padding={p.padding}: read them from the "
                "problem (p.stride, p.padding) instead of fixing them.", "", "other_problem"))
    return found


def _g7_context(p: Problem, right: dict) -> dict:
    mistakes = _g7_mistakes(p, right["dx"], right["dw"])
    return {"dx": dict(of="x", mistakes=mistakes["dx"]),
            "dw": dict(of="w", batch_size=p.x.shape[0], mistakes=mistakes["dw"])}


def _g7_label(result: Result, p: Problem) -> Result:
    # each problem is a part of its own: G7 needs stride and padding as well
    return named(result, g7_part(result.name, p.stride, p.padding))


_check_g7 = gradients(Gradients(
    "G7", ("dx", "dw"), g7_problem, _g7_engine, _g7_context, options=dict(G7_DEFAULT),
    label=_g7_label),
    """``G7(my_g7)``: your ``my_g7(p) -> {"dx": ..., "dw": ...}`` on ``G7.problem()``
    (stride 1, no padding); ``G7(my_g7, stride=2, padding=1)`` runs it on
    ``G7.problem(stride=2, padding=1)``, which the item requires too.""")
# the bank checks G7 with stride and padding too: the strided problem's parts are required
_check_g7.parts = ("dx", "dw", g7_part("dx", **G7_STRIDED), g7_part("dw", **G7_STRIDED))


register(Exercise("G7", "derivation", {"gradients": _check_g7}, level="M", problem=g7_problem))


# -- G13: how a loss is reduced over a padded batch of sequences ---------------------------------


def g13_problem() -> Problem:
    """A padded batch of 3 sequences of 6 positions (lengths all different), a linear model
    with per-token loss (x·w − t)², and the gradient of the mean over the real tokens (from
    the engine)."""
    g = rng(13)
    batch, length, features = 3, 6, 3
    lengths = g.choice(np.arange(2, length + 1), size=batch, replace=False)
    mask = (np.arange(length)[None, :] < lengths[:, None]).astype(np.float64)
    x, t = g.standard_normal((batch, length, features)), g.standard_normal((batch, length))
    w = g.standard_normal(features)
    p = Problem("A padded batch: 3 sequences of up to 6 tokens, mask[b, s] = 1 where position "
                "s of sequence b holds a real token and 0 on padding (x and t hold leftover "
                "numbers there). Per token, loss_bs = (x[b, s] @ w - t[b, s])**2. grad_tok = "
                "dL_tok/dw for L_tok, the mean over the real tokens (from the engine). Find "
                "grad_sum for L_sum, the sum over the real tokens, and grad_seq for L_seq, each "
                "sequence's mean over its own real tokens, then the mean over the 3 sequences.",
                x=x, t=t, mask=mask, w=w)
    return Problem(p.description, **p, grad_tok=_g13_gradient(p, "tok"))


def _g13_loss(p: Problem, w, reduction: str, masked: bool = True):
    """The loss of ``p`` under one reduction, as engine ops on the leaf ``w``: "tok" (mean
    over the real tokens), "sum" (their sum), "seq" (each sequence's mean over its real
    tokens, then the mean over the sequences); "seq_all_positions" divides each sequence by
    every position; ``masked=False`` counts the padding's tokens as real."""
    mask = p.mask if masked else np.ones_like(p.mask)
    per_token = (ag.tensor(p.x) @ w - ag.tensor(p.t)) ** 2 * ag.tensor(mask)
    per_sequence = per_token.sum(axis=1)
    if reduction == "sum":
        return per_token.sum()
    if reduction == "tok":
        return per_token.sum() / float(mask.sum())
    if reduction == "seq_all_positions":
        return (per_sequence / float(mask.shape[1])).mean()
    if reduction == "seq_unaveraged":
        return (per_sequence / ag.tensor(mask.sum(axis=1))).sum()
    return (per_sequence / ag.tensor(mask.sum(axis=1))).mean()


def _g13_gradient(p: Problem, reduction: str, masked: bool = True) -> np.ndarray:
    w = ag.tensor(np.array(p.w), requires_grad=True)
    _g13_loss(p, w, reduction, masked).backward()
    return w.grad.numpy()


def _g13_context(p: Problem, right) -> dict:
    """Each part's wrong answers, built from the engine's gradients of the wrong losses."""
    tok, total = p.grad_tok, _g13_gradient(p, "sum")
    batch, length = p.mask.shape
    real = float(p.mask.sum())
    return {
        "grad_sum": dict(of="w", mistakes=[
            Mistake(tok * batch * length, "You scaled grad_tok by every position, padding "
                    "included: L_tok divides by the real tokens only.", "", "counted_padding"),
            Mistake(tok * batch, "You scaled grad_tok by the number of sequences: L_tok is a "
                    "mean over tokens, not over sequences.", "", "batch_count"),
            Mistake(tok / real, "You divided where the sum multiplies: L_sum is a larger "
                    "loss than L_tok, and so is its gradient.", "", "inverse"),
            Mistake(_g13_gradient(p, "sum", masked=False), "Your sum includes the padding's "
                    "tokens: the mask leaves them out of the loss.", "", "no_mask")]),
        "grad_seq": dict(of="w", mistakes=[
            Mistake(tok, "That is grad_tok, the mean over all real tokens. L_seq averages each "
                    "sequence over its own tokens first, so a token of a short sequence "
                    "weighs more than one of a long sequence.", "", "token_mean"),
            Mistake(_g13_gradient(p, "seq_all_positions"), "You divided each sequence by "
                    "every position, padding included: each sequence's mean is over its own "
                    "real tokens.", "", "counted_padding"),
            Mistake(total / batch, "You left out each sequence's own mean: every sequence is "
                    "divided by its number of real tokens before the mean over sequences.", "",
                    "no_length_mean"),
            Mistake(_g13_gradient(p, "seq_unaveraged"), "You left out the mean over the "
                    "sequences: L_seq divides the sum of the sequences' means by their "
                    "number.", "", "no_batch_mean"),
            Mistake(_g13_gradient(p, "seq", masked=False), "Your means include the padding's "
                    "tokens: the mask leaves them out of the loss.", "", "no_mask")]),
    }


_check_g13 = gradients(Gradients(
    "G13", ("grad_sum", "grad_seq"), g13_problem,
    lambda p: {"grad_sum": _g13_gradient(p, "sum"), "grad_seq": _g13_gradient(p, "seq")},
    _g13_context),
    """``G13(grad_sum=..., grad_seq=...)`` on ``G13.problem()`` (either or both).""")


register(Exercise("G13", "derivation", {"gradients": _check_g13}, level="S", problem=g13_problem))
