"""A lesson never shows the answer of an exercise it asks: not in its text, not in its code,
not in a stored output.

The learner derives, writes, predicts or runs something and the engine checks it; the
formula, the worked answer and the engine's own comparison sit behind the help the learner
asks for (hint, skeleton, solution) or behind ``after_solving`` (a sentence until the item
is solved). This test holds a lesson to that: for every (lesson, item) row of ``TABLE`` it
computes the item's answer independently (NumPy on the item's own problem data, never the
check's code) and looks for it, printed the ways a lesson would print it, in every cell
source and every stored output (text, HTML, SVG tooltips; PNG pixels are not text).

To hold another lesson to it, add rows: ``(lesson stem, item ID, answers)``, where
``answers()`` returns strings (matched as written, and with whitespace collapsed) or compiled
regular expressions (for numbers: ``number(0.25)`` does not match inside ``10.25``). The
helpers ``printed(array)`` and ``diagnosis_of(...)`` give an array as NumPy prints it and the
checker's feedback on a snippet.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pytest
from solutions import solution_text

from widgets import exercises as ex

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
Forbidden = str | re.Pattern

# -- how a lesson would print an answer ----------------------------------------------------------


def number(value: float, fmt: str) -> re.Pattern:
    """``value`` written with ``fmt``, as a whole number (not inside a longer one)."""
    text = format(value, fmt)
    return re.compile(rf"(?<![\w.]){re.escape(text)}(?![\d])")


def printed(array, *, precision: int = 4) -> list[Forbidden]:
    """An answer array as a lesson would show it: NumPy's printout with the lessons'
    options (``precision=4, suppress=True``) and with NumPy's defaults, each row of it, and
    every entry with at least three significant digits at four decimals."""
    a = np.asarray(array, dtype=float)
    found: list[Forbidden] = []
    for options in ({"precision": precision, "suppress": True}, {}):
        with np.printoptions(**options):
            text = str(a)
        found.append(text)
        if a.ndim == 2:
            found += [line.strip() for line in text.splitlines() if line.strip()]
    for v in a.ravel():
        digits = format(abs(v), ".4f").lstrip("0.").rstrip()
        if len(digits) >= 3:
            found.append(number(v, ".4f"))
    return found


def scientific(values: Iterable[float]) -> list[Forbidden]:
    """Small or large numbers as a lesson prints them (``2.06e-06``, ``0.105``)."""
    found: list[Forbidden] = []
    for v in values:
        found += [number(v, ".2e"), number(v, ".3g")]
    return found


def diagnosis_of(exercise_id: str, snippet: str, name: str, namespace=None) -> list[str]:
    """The checker's sentences about the buggy ``snippet`` as written (its wrong parts): a
    lesson that stores them has fixed the learner's exercise for them."""
    scope = {"np": np, **(namespace or {})}
    exec(snippet, scope)
    result = getattr(ex, exercise_id).demo(scope[name])
    parts = result.parts or [result]
    return [p.message for p in parts if not p.ok]


def solution_lines(exercise_id: str) -> list[str]:
    """The lines of an item's worked solution long enough to give something away, except
    those its own buggy snippet or its skeleton shares."""
    exercise = ex.registry()[exercise_id]
    # The snippet is the question and the skeleton the answer's scaffold (a signature, a
    # return line): their lines are given, not answers.
    given_text = f"{exercise.snippet or ''}\n{getattr(exercise, 'skeleton', None) or ''}"
    given = {" ".join(line.split()) for line in given_text.splitlines()}
    text = str(solution_text(exercise))
    return [line.strip() for line in text.splitlines()
            if len(line.strip()) >= 12 and " ".join(line.split()) not in given]


def sigmoid(z):
    return 1 / (1 + np.exp(-np.asarray(z, dtype=float)))


# -- each item's answer, computed here ------------------------------------------------------------


def g6() -> list[Forbidden]:
    found: list[Forbidden] = ["G Bᵀ", "Aᵀ G", "G @ B.T", "A.T @ G", "g @ b.T", "a.T @ g",
                              "G·Bᵀ", "Aᵀ·G", "B.T @ G"]
    for square in (False, True):
        p = ex.G6.problem(square=square)
        found += printed(p.G @ p.B.T) + printed(p.A.T @ p.G)
    return found + solution_lines("G6")


def _mlp_answers(p) -> dict[str, np.ndarray]:
    n = len(p.x)
    delta3 = (p.z3 - p.target) / n
    delta2 = (delta3 @ p.W3) * (1 - p.a2 ** 2)
    return {"delta3": delta3, "delta2": delta2, "dW2": delta2.T @ p.a1,
            "db2": delta2.sum(axis=0), "delta1": (delta2 @ p.W2) * (1 - p.a1 ** 2)}


def g5() -> list[Forbidden]:
    found: list[Forbidden] = [
        "delta2.T @ a1", "delta2.T @ m.a1", "delta2.T @ p.a1", "delta2ᵀ a1", "δ2ᵀ", "W2ᵀ δ2",
        "W2ᵀδ2", "(delta2 @ m.W2) * (1 - m.a1", "(delta2 @ p.W2) * (1 - p.a1",
        "(delta2 W2) ⊙ (1 − a1²)", "delta2.sum(axis=0)", "delta2.sum(0)", "Σ_n delta2",
        "(delta3 @ m.W3) * (1 - m.a2", "(delta3 @ p.W3) * (1 - p.a2", "(delta3 W3) ⊙ (1 − a2²)",
        "(m.z3 - m.target) / N", "(p.z3 - p.target) / N", "(z3 − target) / N",
        # the engine's own rules, as a graph's tooltips or the stepper print them
        "dweight = g.T @ input", "dinput = g @ weight", "g * (1 - out**2)"]
    answers = _mlp_answers(ex.G5.problem())
    for part in ("dW2", "db2", "delta1", "delta2"):
        found += printed(answers[part])
    return found + solution_lines("G5")


def g8() -> list[Forbidden]:
    # by hand: every gradient has its tensor's shape; db is summed over every front axis
    return ["(128,)", "summed away", "summed over the batch", "sums the 64",
            "tuple(range(len(front)))", "range(len(x_shape) - 1)", "every axis but the last",
            '"db": (units,)', "'db': (units,)", "(units, features)"] + solution_lines("G8")


def g9() -> list[Forbidden]:
    q = ex.G9.problem()
    return (["G.sum(axis=0)", "G.sum(0)", "sum(axis=0)", "summed over axis 0",
             "the rule gave shape", "db = g", "backward of a copy is a sum",
             "keepdims=True).reshape(shape)", "g.shape[added + i]", "n == 1 and"]
            + printed(q.G.sum(axis=0)) + solution_lines("G9"))


def g13() -> list[Forbidden]:
    r = ex.G13.problem()
    # by hand: d/dw (x·w − t)² = 2(x·w − t)x per token; L_sum weighs real tokens by 1,
    # L_seq by 1 / (B · n_b)
    per_token = 2 * (r.x @ r.w - r.t)[..., None] * r.x
    seq = r.mask / (len(r.mask) * r.mask.sum(axis=1, keepdims=True))
    grad_sum = (r.mask[..., None] * per_token).sum(axis=(0, 1))
    grad_seq = (seq[..., None] * per_token).sum(axis=(0, 1))
    n = int(r.mask.sum())
    return ([f"{n} times", f"× {n}", f"factor = {n}", f"n = {n}", "r.mask.sum() * r.grad_tok",
             "mask.sum() * grad_tok", "1 / (B · n_b)", "1/(B · n_b)", "1/(B·n_b)",
             "N times", "scales by N", "scale by N"]
            + printed(grad_sum) + printed(grad_seq) + solution_lines("G13"))


def g12() -> list[Forbidden]:
    p = ex.G12.problem()
    answers = _mlp_answers(p)
    found: list[Forbidden] = [
        "dW2 = delta2.T @ p.a1", "(delta2 @ p.W2) * (1 - p.a1", "(p.z3 - p.target) / N",
        "(p.z3 - p.target) / len(p.x)", "flipped transpose (dW2 = a1.T @ delta2)"]
    found += diagnosis_of("G12", ex.G12.snippet, "backprop")
    for part in ("dW2", "db2", "delta1"):
        found += printed(answers[part])
    return found + solution_lines("G12")


def e3() -> list[Forbidden]:
    # by hand: log σ'(z) = −|z| − 2·log(1 + e^(−|z|)), in NumPy and in words
    return (["σ(z)(1 − σ(z))", "σ(1 − σ)", "σ(z)(1 - σ(z))", "s * (1 - s)", "s*(1-s)",
             "1/2 · 1/2", "4.5 × 10⁻⁵", "4.5e-5", "0.25", number(0.25, ".2f"), "2.718",
             "2 * np.log1p(np.exp(-", "2*np.log1p(np.exp(-", "log1p(np.exp(-a))",
             "-np.logaddexp(0", "− 2·log(1 + e^(−", "e^(−z) / (1 + e^(−z))²",
             "e^(−a) / (1 + e^(−a))²", "−2 log 2", "≈ e^(−z)", "≈ e^(-z)", "≈ −|z|"]
            + solution_lines("E3"))


def w5() -> list[Forbidden]:
    p = ex.W5.problem()
    s = sigmoid(p.z)
    dz = p.G * s * (1 - s)
    return (["G * s * (1 - s)", "1000 × σ'(z)", "× σ'(z)", "upstream × σ'", "2e-6", "= 250",
             "layers = 6", "layers=6", "d = 6", "0.0177", "0.018"]
            + scientific(dz) + printed(dz) + solution_lines("W5"))


def s2() -> list[Forbidden]:
    import autograd_core as ag

    # the reset and where it goes, and each micro-batch's share of the batch's mean
    return (["w.grad = None", "zero_grad(", "grad.zero_()", ".grad accumulates",
             "adds into .grad", "adds to it", "never reset", "no reset in between",
             "never resetting", "reset once per step", "len(xs) / len(x)", "len(xs)/len(x)",
             "n_i / N", "n_i/N", "weighed by its share", "4/10", "2/10", "0.4, 0.4"]
            + diagnosis_of("S2", ex.S2.snippet, "step_gradients", {"ag": ag})
            + solution_lines("S2"))


def l9() -> list[Forbidden]:
    return (["op 'pow'", "first_nonfinite_op='pow'", 'first_nonfinite_op="pow"',
             "Ratio      | (5, 6)", "Ratio       (5, 6)", "found.append(path)",
             "the log stays finite", "power 0.5 of a negative"] + solution_lines("L9"))


# -- lessons 06, 07 and 08: routing, convolution, batch norm and dropout -------------------------


def worked_lines(exercise_id: str) -> list[str]:
    """:func:`solution_lines`, less the lines that only set the problem up (``p =
    G2.problem()``, ``def my_gradcheck(f, x, h=1e-6):``): a lesson gives those."""
    setup = re.compile(r"^\w+ = (\w+\.)?[A-Z]\d+\.problem\([^)]*\)$|^def \w+\(.*\):$")
    return [line for line in solution_lines(exercise_id) if not setup.match(line)]


def engine_rule(build: Callable[[], object]) -> list[str]:
    """Each line of the rule of the op that ``build()`` records (what a graph's tooltip, the
    stepper or a print of ``op.rule`` shows)."""
    from autograd_core.tools.graph import capture

    op = capture(build()).ops[0]
    return [line.strip() for line in op.rule.splitlines() if len(line.strip()) >= 12]


def backward_lines(exercise_id: str) -> list[str]:
    """The lines of a write-the-backward item's worked solution that the learner writes:
    what forward saves, and the backward. The rest of forward is given in the lesson."""
    lines = [" ".join(line.split("#")[0].split())
             for line in str(solution_text(ex.registry()[exercise_id])).splitlines()]
    start = next(i for i, line in enumerate(lines) if "def backward" in line)
    given = {line for line in lines[:start] if "ctx.save(" not in line}
    mine = [line for line in lines[start + 1:] if line not in given]
    mine += [line for line in lines[:start] if "ctx.save(" in line]
    return [line for line in mine if len(line) >= 12]


def _g2_answers(p) -> dict[str, np.ndarray]:
    tie = (p.a == p.b) * 0.5
    return {"da": p.G * ((p.a > p.b) + tie), "db": p.G * ((p.b > p.a) + tie),
            "dx": p.G * (p.x > 0)}


def g2() -> list[Forbidden]:
    import autograd_core as ag

    found: list[Forbidden] = [
        "half and half", "half each", "splits a tie", "split equally", "splits it equally",
        "splits the tie", "0.5 * (a == b)", "0.5 * (p.a == p.b)", "(a < b) - 0.5",
        "(x > 0)", "mask is `x > 0`", "mask is x > 0", "gradient [0.5 0.5]", "[0.5 0.5]",
        "gradient at exactly 0 is 0", "gives **0** at 0", "at x = 0 is 0",
        "ReLU is a 0/1 mask", "the loser exactly 0", "loser gets exactly 0",
        "winner gets the upstream"]
    a, b = (ag.tensor([1.0, 2.0], requires_grad=True) for _ in range(2))
    found += engine_rule(lambda: ag.maximum(a, b)) + engine_rule(lambda: ag.relu(a))
    for part in _g2_answers(ex.G2.problem()).values():
        found += printed(part)
    return found + worked_lines("G2")


def _pool_answers(p) -> dict[str, np.ndarray]:
    half = p.x.shape[-1] // 2
    windows = p.x[0, 0].reshape(half, 2, half, 2).transpose(0, 2, 1, 3)
    winner = windows == windows.max(axis=(2, 3), keepdims=True)
    g = p.G[0, 0][:, :, None, None]
    dx_max = (winner * g).transpose(0, 2, 1, 3).reshape(p.x.shape)
    dx_avg = (np.ones_like(windows) * g / 4).transpose(0, 2, 1, 3).reshape(p.x.shape)
    return {"dx_max": dx_max, "dx_avg": dx_avg}


def g3() -> list[Forbidden]:
    import autograd_core as ag
    from autograd_core.nn import functional as F

    found: list[Forbidden] = [
        "g/4", "g / 4", "g/k²", "1/k²", "1/k^2", "g/9", "a quarter", "/ 4 ", "9 · dL/dx",
        "to its argmax", "its maximum (its argmax)", "whole upstream gradient goes",
        "each window's g on one pixel", "gets **g/4**"]
    x = ag.tensor(np.ones((1, 1, 4, 4)), requires_grad=True)
    found += engine_rule(lambda: F.max_pool2d(x, 2)) + engine_rule(lambda: F.avg_pool2d(x, 2))
    for part in _pool_answers(ex.G3.problem()).values():
        found += printed(part)
    return found + worked_lines("G3")


def g10() -> list[Forbidden]:
    import autograd_core as ag
    from autograd_core.nn import functional as F

    r = ex.G10.problem()
    dW = np.zeros_like(r.W)
    for n, i in enumerate(r.ids):
        dW[i] += r.G[n]
    found: list[Forbidden] = [
        "np.add.at", "add.at(", "repeats add up", "scatter-add", "scatter add",
        "gets the **sum**", "receives the **sum**", "G[ids == 1]", "G_out[ids == 1]",
        "r.G[r.ids == 1]", "row 1 = G[0] + G[2] + G[4]", "1 + 10 + 100 = 111"]
    table = ag.tensor(np.ones((6, 3)), requires_grad=True)
    found += engine_rule(lambda: F.embedding(r.ids, table))
    return found + printed(dW) + printed(dW[1]) + worked_lines("G10")


def b1() -> list[Forbidden]:
    both_ways = re.compile(r"f\(\s*x\s*\+\s*h\s*\)\s*[-−]\s*f\(\s*x\s*[-−]\s*h\s*\)")
    at_point = re.compile(r"f_at\(0\.7 \+ h\) - f_at\(0\.7 - h\)")
    return ([both_ways, at_point, "f_plus - f_minus", "/ (2 * h)", "/ 2h", "/ (2h)", "/(2h)",
             "(2 * h)", "x[i] = original"] + worked_lines("B1"))


def _conv_answers(p) -> tuple[np.ndarray, np.ndarray]:
    """dx and dw of conv2d for the problem ``p``, by the definition: every output position
    sends its G back through the kernel, one kernel entry at a time."""
    s, pad = p.stride, p.padding
    xp = np.pad(p.x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp, dw = np.zeros_like(xp), np.zeros_like(p.w)
    n_out = p.G.shape[2]
    for n in range(p.x.shape[0]):
        for o in range(p.w.shape[0]):
            for a in range(n_out):
                for b in range(n_out):
                    window = xp[n, :, a * s:a * s + 3, b * s:b * s + 3]
                    dw[o] += p.G[n, o, a, b] * window
                    dxp[n, :, a * s:a * s + 3, b * s:b * s + 3] += p.G[n, o, a, b] * p.w[o]
    size = p.x.shape[-1]
    return dxp[:, :, pad:pad + size, pad:pad + size], dw


def g7() -> list[Forbidden]:
    import autograd_core as ag
    from autograd_core.nn import functional as F

    found: list[Forbidden] = [
        "rot180", "rotated by 180", "rotated 180", "rotate the kernel", "[::-1, ::-1]",
        "full convolution of", "full* convolution", "correlate(np.pad(G", "correlate(pad(G",
        "correlate(x2d, G2d)", "correlate(x, G)", "correlate(xp, Gs)", "Gs[::s, ::s]",
        "spread G", "read **backwards", "read backwards", "cropped off", "crop dx",
        "correlate for the kernel", "kernel gradient** = the *correlation",
        "kernel gradient = correlation", "dA = G Bᵀ", "dB = Aᵀ G"]
    x = ag.tensor(np.ones((1, 1, 5, 5)), requires_grad=True)
    w = ag.tensor(np.ones((1, 1, 3, 3)), requires_grad=True)
    found += engine_rule(lambda: F.conv2d(x, w))
    for stride, padding in ((1, 0), (2, 1)):
        for part in _conv_answers(ex.G7.problem(stride=stride, padding=padding)):
            found += printed(part, precision=3)
    return found + worked_lines("G7")


def b2() -> list[Forbidden]:
    import autograd_core as ag
    from autograd_core.nn import functional as F

    x = ag.tensor(np.ones((1, 1, 5, 5)), requires_grad=True)
    w = ag.tensor(np.ones((1, 1, 3, 3)), requires_grad=True)
    return (["ctx.save(x=x, w=w)", "nopq,ncpqij->ocij", "nopq,oc->ncpq",
             "it keeps **the input**", "keeps the input and the kernel"]
            + engine_rule(lambda: F.conv2d(x, w)) + backward_lines("B2"))


def b3() -> list[Forbidden]:
    import autograd_core as ag
    from autograd_core.nn import functional as F

    x = ag.tensor(np.ones((1, 1, 4, 4)), requires_grad=True)
    return (["argmax(axis=-1)", "put_along_axis", "ctx.save(winner", "what `np.argmax` returns",
             "what np.argmax returns"]
            + engine_rule(lambda: F.max_pool2d(x, 2)) + backward_lines("B3"))


def _bn_answer(p) -> np.ndarray:
    """Batch norm's dx in training mode by the chain rule, path by path."""
    n = len(p.x)
    mu, var = p.x.mean(axis=0), p.x.var(axis=0)
    s = np.sqrt(var + p.eps)
    dxhat = p.G * p.gamma
    dvar = (dxhat * (p.x - mu)).sum(axis=0) * -0.5 * s ** -3
    dmu = -(dxhat / s).sum(axis=0)
    return dxhat / s + dvar * 2 * (p.x - mu) / n + dmu / n


def _bn_rule() -> list[str]:
    import autograd_core as ag
    from autograd_core.nn import functional as F

    x = ag.tensor(np.ones((4, 3)), requires_grad=True)
    return engine_rule(lambda: F.batch_norm(x, None, None, ag.tensor(np.ones(3)),
                                            ag.tensor(np.zeros(3)), training=True))


def g14() -> list[Forbidden]:
    found: list[Forbidden] = [
        "dxhat - dxhat.mean", "(dxhat * xhat).mean", "M\\,g - \\sum g", "\\sum g\\,\\hat x",
        "mean(dx̂)", "x̂ · mean(dx̂ · x̂)", "only the first term is left",
        "gets two extra terms", "depends on the other samples in its batch",
        "the bars differ", "identical bars", "batch-mates changed the sample's gradient",
        "the same one in evaluation mode"]
    return found + _bn_rule() + printed(_bn_answer(ex.G14.problem())) + worked_lines("G14")


def b4() -> list[Forbidden]:
    return (["(dxhat * xhat).mean", "dxhat.mean(axis=0)", "(g * xhat).sum(axis=0)",
             "g.sum(axis=0)", "ctx.save(xhat=", "dγ = Σ", "dβ = Σ"]
            + _bn_rule() + backward_lines("B4"))


def _dropout_rule() -> list[str]:
    import autograd_core as ag
    from autograd_core.nn import functional as F

    return engine_rule(lambda: F.dropout(ag.ones(5, requires_grad=True), 0.3,
                                         generator=ag.Generator(1)))


SCALE = ["1 / (1 - p)", "/ (1 - p)", "/(1 - p)", "/ (1 − p)", "1/(1 − p)", "1/(1-p)",
         "/(1-p)", "1 / 0.75", "1/0.75", "4/3", number(4 / 3, ".4f"), number(4 / 3, ".3f"),
         number(4 / 3, ".2f")]


def b5() -> list[Forbidden]:
    return (["ctx.save(keep=keep)", "g * keep", "g * mask", "saved: [('mask'"] + SCALE
            + _dropout_rule() + backward_lines("B5"))


def b6() -> list[Forbidden]:
    return (["probs - one_hot", "probs − one_hot", "softmax(logits) − one_hot",
             "softmax(logits) - one_hot", "ctx.save(probs=", "minus the one-hot",
             "minus 1 at the target"] + backward_lines("B6"))


def l5() -> list[Forbidden]:
    p5 = ex.L5.problem()
    running = 0.9 * np.zeros(3) + 0.1 * p5.x.mean(axis=0)
    normed = _right_answers("L5", p5)["batchnorm_eval"]
    return (SCALE + printed(normed) + ["0.9 + 0.1", "0.9 * 1 + 0.1", "dropout_eval = p5.z",
                                      "dropout_eval=p5.z", "(z − running_mean)"] + [
        re.compile(r"0\.1\s*[*·]\s*[\w.]*mean"), "0.9 * 0 + 0.1", "(1 − m)·running",
        "(1 - m) * running", "0.9 * running", "does nothing when evaluating",
        "identity in evaluation", "is the identity", "the output *is* the input",
        "same tensor returned: True"] + printed(running) + worked_lines("L5"))


def l6() -> list[Forbidden]:
    import autograd_core as ag
    from autograd_core.nn import functional as F

    masks = {"".join("1" if v else "0" for v in
                     F.dropout(ag.ones(16), 0.5, generator=ag.Generator(seed)).numpy())
             for seed in (7, 8)}
    return (sorted(masks) + [
        "not associative", "(1e8 + 1) - 1e8", "float32 steps apart", "entries that differ",
        "draws the same numbers", "same seed draws the same", "still not enough for",
        "does not always give the same bits", "need more than a seed",
        "can give another result", "100000008", "100,000,008", "1e8 + 8", "are 8 apart",
        "distinct_masks=4", "distinct_masks = 4"] + worked_lines("L6"))


# -- lesson 03: the reverse sweep -----------------------------------------------------------------


def _said(item: str, *phrases: Forbidden) -> list[Forbidden]:
    """A true/false item's answer: the sentence said once it is settled, the reasoning of its
    worked solution (the first paragraph, after the verdict, clause by clause), and
    ``phrases``, the ways a lesson would state it."""
    from solutions import words

    first = str(solution_text(ex.registry()[item])).split("\n")[0]
    reasoning = first.partition(". ")[2]
    clauses = [c for c in re.split(r"(?<=[.:;])\s+", reasoning) if len(c) >= 25]
    return [words(item)["settled"], *clauses, *phrases]


def t6() -> list[Forbidden]:
    return _said("T6", "Backprop is reverse-mode AD", "Backprop *is* reverse-mode AD",
                 "backprop is reverse mode", "the name this algorithm got",
                 "is reverse-mode AD applied to", "Backprop is reverse mode",
                 "x @ W1.T + b1", "@ W2.T + b2", "the same gradient both times",
                 "formula_grad=W1.grad", "W1.grad}")


def t8() -> list[Forbidden]:
    return _said("T8", "gradients add up", "gets the **sum**", "the sum of every contribution",
                 "gradient is the SUM", "never an average", "the two changes add",
                 "x.grad is the sum", "Step 3 is the one that accumulates")


def t9() -> list[Forbidden]:
    return _said("T9", "scales every gradient by", r"differentiates $c\,L$", "dL/dL",
                 r"\partial L/\partial L", "differentiating a different loss",
                 "multiplies every entry of every gradient", "Seed 1 reproduces",
                 "(c * loss(", "c * loss(W", r"M = c\,L", "M = cL", "M = c·L", "c·L",
                 r"$c\,L$", "dM/dL = c")


def t10() -> list[Forbidden]:
    return _said("T10", "descent steps against it", "points uphill fastest",
                 "largest measured rate", "direction of +grad", "gradient points uphill")


def s1() -> list[Forbidden]:
    from widgets.exercises.spot_error import _s1_data

    x, y = _s1_data()  # the item's data; the gradients of sum((x + y) * tanh(x)), by hand
    dx, dy = np.tanh(x) + (x + y) * (1 - np.tanh(x) ** 2), np.tanh(x)
    return (["x_bar +=", "x_bar = x_bar +", "x_bar += ", "accumulate:", "the overwrite lost",
             "a_bar + b_bar * (1 - b**2)", "b_bar * (1 - b**2) + a_bar"]
            + printed(dx) + printed(dy) + diagnosis_of("S1", ex.S1.snippet, "grads")
            + solution_lines("S1"))


def s5() -> list[Forbidden]:
    from widgets.exercises.spot_error import _s5_problem

    p = _s5_problem()
    dw = (p["w"] * p["x"] + p["b"] - p["t"]) * p["x"]  # (dL/dz) · (dz/dw), entry by entry
    return (["z_bar * x", "z̄ · x", r"\bar z \cdot x", r"\bar w = \bar z", "(z - t) * x",
             "z_bar = z - t", "z.grad.numpy() * xs", r"\bar z = \partial L/\partial z = z - t"]
            + printed(dw) + diagnosis_of("S5", ex.S5.snippet, "grad_w") + solution_lines("S5"))


def s6() -> list[Forbidden]:
    import autograd_core as ag

    return (["One pass fills", "one pass fills every leaf", "ONE sweep", "a single backward",
             "costs one backward pass", "one backward pass, however many", "(la + lb)",
             "la + lb", "rules_run_twice=2",
             "rules_run_twice = 2", re.compile(r"""\{\s*["']w1["'],\s*["']w[ab]["']\s*\}""")]
            + diagnosis_of("S6", ex.S6.snippet, "gradients", {"ag": ag})
            + [line for line in solution_lines("S6") if line != "loss.backward()"])


def e1() -> list[Forbidden]:
    # never reached (b, e): .grad stays None; reached with a zero adjoint (c, d): zeros
    sets = [f"{{{q}{x}{q}, {q}{y}{q}}}" for q in "'\"" for x, y in ("be", "eb", "cd", "dc")]
    return (["v.grad = None", "u.grad = tensor([0., 0.])", "keeps `.grad = None`",
             ".grad` stays `None`", ".grad stays None", "grad_none={", "grad_zero={",
             "even if that array is all zeros", "explicit zero",
             "Reached with a zero adjoint: zeros", "relu sends back 0", "d.grad = tensor([0., 0.])"]
            + sets + solution_lines("E1"))


def e2() -> list[Forbidden]:
    p = ex.E2.problem()
    dk = float(np.dot(p.w, p.x))  # by hand: dz_i/dk = w_i x_i, summed over the entries
    return (["dw = 2 * x", "dw = 2x", "= 2 * x", "2 * p.x", "literal_gets_gradient=False",
             "records it as a **constant**", "no edge for the sweep", "not a graph node",
             "sends nothing to", "A literal is a constant of its op", "(p.w * p.x).sum()",
             "p.w @ p.x", "np.dot(p.w, p.x)", r"\sum_i w_i x_i", "Σ w_i·x_i"]
            + printed(2 * p.x) + printed([dk]) + [number(dk, ".4f"), number(dk, ".3f")]
            + solution_lines("E2"))


def e4() -> list[Forbidden]:
    p = ex.E4.problem()
    # by hand: 2(a·w² − t)·2a·w = 0 at w = 0 and at w = ±√(t/a) (real when t/a > 0)
    root = float(np.sqrt(p.t / p.a))
    return (["np.sqrt(t / a)", "np.sqrt(p.t / p.a)", "sqrt(t/a)", "√(t/a)", r"\sqrt{t/a}",
             r"\sqrt{\frac{t}{a}}", "t / a > 0", "t/a > 0", "local maximum", "three flat points",
             "flat_points = ", "points = [0.0]", "[0.0] + "]
            + [number(v, ".4f") for v in (root, -root)] + [number(v, ".3f") for v in (root, -root)]
            + solution_lines("E4"))


def e5() -> list[Forbidden]:
    p = ex.E5.problem()
    h = np.tanh(p.x @ p.W)  # out = h @ W.T, loss = sum(out * t): each use of W, then both
    dW = p.t.T @ h + p.x.T @ ((p.t @ p.W) * (1 - h ** 2))
    return (["t.T @ h", "out_bar.T @ h", "p.t.T @ p.h", "dW_first + dW_second",
             "sum of both sites", "sum of the two sites", "is the **sum** of the two"]
            + printed(dW) + solution_lines("E5"))


def e6() -> list[Forbidden]:
    p = ex.E6.problem()
    dx = p.x * (1 - np.tanh(p.x) ** 2) + p.x ** 2  # by hand: each detached copy a constant
    return (["dx = x", "dx = p.x", "value_changes=False", "(3, not 3 + 2x)", "3 + 2x",
             "only the `3x` path reaches", "same values: True", "x.grad = tensor([3., 3.])",
             "was not even recorded", "(1 - np.tanh(p.x)**2) + p.x**2", "+ p.x ** 2",
             r"c(1 - \tanh^2 x) + c^2", "x(1 − tanh²x) + x²"]
            + printed(dx) + solution_lines("E6"))


def w3() -> list[Forbidden]:
    lines = [" ".join(line.split("#")[0].split())
             for line in str(solution_text(ex.W3)).splitlines()]
    start = next(i for i, line in enumerate(lines) if "def backward" in line)
    written = [line for line in lines[start + 1:] if len(line) >= 12]  # the backward only
    prose = [line for line in lines[:start] if len(line) >= 60]
    return (["g * sigmoid(x)", "g / (1 + np.exp(-x))", "derivative is the sigmoid",
             "(g forgotten!)", "the local derivative only", "missing the upstream gradient",
             "softplus' = σ", "= σ(x)"] + written + prose)


# -- lessons 01, 02, 04 and 09: start here, the forward graph, memory, forward and reverse mode ---


def _verdict(truth: bool) -> re.Pattern:
    """A true/false item's verdict written into a cell (not the question's "True or False")."""
    return re.compile(rf"verdict\s*=\s*{truth}\b(?!\s*or\b)")


def _prose(item: str) -> list[str]:
    """The clauses of the first paragraph of an item's worked solution (its reasoning)."""
    first = str(solution_text(ex.registry()[item])).split("\n")[0]
    return [c for c in re.split(r"(?<=[.:;])\s+", first) if len(c) >= 25]


def e2_first() -> list[Forbidden]:
    # lesson 01 shows E2's mistake on another literal: never on the learner's own problem
    return e2() + ["You dropped the 2", "dw = 2 *", "2·x"]


def _reverse_topological(reads: dict, output: str) -> list[str]:
    """The order a reverse sweep visits ops: from ``output``, an op only once every op that
    read its result has been visited (``reads``: op -> the ops whose results it reads)."""
    consumers = {op: [o for o, ins in reads.items() if op in ins] for op in reads}
    order, ready = [], [output]
    while ready:
        op = ready.pop(0)
        order.append(op)
        for producer in reads[op]:
            if all(c in order for c in consumers[producer]) and producer not in order + ready:
                ready.append(producer)
    return order


def g4() -> list[Forbidden]:
    # a = x * w; c = a + tanh(a); loss = c.sum(): which op reads which op's result
    order = _reverse_topological({"sum": ("add",), "add": ("mul", "tanh"), "tanh": ("mul",),
                                  "mul": ()}, "sum")
    # the lesson's own graph, u = x * w; loss = ((u - exp(u)) ** 2).sum(), has the same shape:
    # its order, shown before the exercise, is the answer with other names
    twin = _reverse_topological({"sum": ("pow",), "pow": ("sub",), "sub": ("mul", "exp"),
                                 "exp": ("mul",), "mul": ()}, "sum")
    return ([str(order), json.dumps(order), " → ".join(order), ", ".join(order), str(twin),
             "comes last in the backward order"] + solution_lines("G4"))


def l1() -> list[Forbidden]:
    # F = Linear -> BatchNorm1d -> ReLU -> Linear -> BatchNorm1d, then the shortcut's
    # projection (8 -> 16 only), then the add that merges
    ops = ["linear", "batch_norm", "relu", "linear", "batch_norm", "linear", "add"]
    # bias-free fc1 and fc2, two batch norms (scale and shift), a bias-free projection
    same = 8 * 8 + 2 * 8 + 8 * 8 + 2 * 8
    wider = 8 * 16 + 2 * 16 + 16 * 16 + 2 * 16 + 8 * 16
    return ([str(ops), json.dumps(ops), " → ".join(ops), "merge_parameters=0", "merge 0",
             "adds **no parameters**", "adds no parameters", "adds 0 parameters",
             "shortcut = NoneType", "(the block: merge) saves nothing",
             "the shortcut itself is no op", f"parameters_same={same}",
             f"parameters_wider={wider}"]
            # as a count is printed (bare numbers also sit in the pictures' coordinates)
            + [form.format(n) for n in (same, wider)
               for form in ("{} parameters", "total {}", "= {}", "total {:3d}")]
            + solution_lines("L1"))


def l2() -> list[Forbidden]:
    p = ex.L2.problem()
    na = p.a.shape[1]  # cat([a, b], dim=1): a's columns first, then b's
    return (["G[:, :3]", "G[:, 3:]", "G[:, 0:3]", "G[:, 3:5]", "a's values sit in the first 3",
             "b's values sit in the last 2", "**splits** the upstream gradient",
             "g[the rows of a_i along dim]",  # cat's own rule, as a graph's tooltip shows it
             "splits the upstream gradient", "exactly the slice its values occupied"]
            + printed(p.G[:, :na]) + printed(p.G[:, na:]) + solution_lines("L2"))


def l3() -> list[Forbidden]:
    # one mul (w_pos or w_neg), then tanh once per whole unit of |x|, at least once
    counts = {x: 1 + max(1, int(abs(x))) for x in (2.5, -0.5)}
    recorded = ["mul"] + ["tanh"] * (counts[2.5] - 1)
    return ([f"ops_positive={counts[2.5]}", f"ops_negative={counts[-0.5]}", str(recorded),
             " → ".join(recorded)] + solution_lines("L3"))


def w6() -> list[Forbidden]:
    # y = tanh^k(w x), k = max(1, int(|x|)): d y / d w is x times each tanh's slope
    found: list[Forbidden] = []
    for x, w in ((2.5, 1.5), (-0.5, -2.0)):
        h, grad = w * x, x
        for _ in range(max(1, int(abs(x)))):
            grad *= 1 - np.tanh(h) ** 2
            h = np.tanh(h)
        found += scientific([grad]) + [number(grad, ".4f"), number(grad, ".4g")]
    return (found + ["w_neg_grad=None", "w_neg.grad = None", "w_pos.grad = None",
                     ".grad` stays `None`", ".grad stays None", "not a zero gradient",
                     "Two inputs, two graphs", "record **different graphs**"]
            + solution_lines("W6"))


def l4() -> list[Forbidden]:
    return (["same_structure=True", "same_values=False", "same_mask_same_input=False",
             "drawn afresh on every call", "The same three ops every time",
             "the program is the same"] + solution_lines("L4"))


def t3() -> list[Forbidden]:
    return _said("T3", _verdict(False), *_prose("T3"))


def w1() -> list[Forbidden]:
    return _said("W1", _verdict(False), *_prose("W1"))


def g11() -> list[Forbidden]:
    # each op keeps what its backward reads: linear gᵀ @ input and g @ W; tanh 1 - out²;
    # relu where its input > 0; add nothing. The learner writes those backwards too.
    backward = [re.compile(r"\bg\s*@\s*(kept\[|weight\b|W\b)"),
                re.compile(r"\bg\.T\s*@\s*(kept\[|input\b|x\b)"),
                re.compile(r"kept\[\s*['\"](output|mask)['\"]\s*\]"),
                re.compile(r"\b1\s*-\s*(out|kept\[[^]]*\])\s*\*\*\s*2"),
                re.compile(r"where\(\s*mask\s*,\s*g\s*,\s*0\s*\)"),
                re.compile(r"\b(tanh|relu|linear|add)=\(\s*\[\s*['\"]"),
                re.compile(r"\badd=\(\s*(\[\s*\]|set\(\))"), "return g, g"]
    return backward + ([re.compile(r"\blinear\s*\|\s*(input|weight)\b"),
                        re.compile(r"\btanh\s*\|\s*out\b"),
             re.compile(r"\brelu\s*\|\s*mask\b"), re.compile(r"\badd\s*\|\s*nothing\b"),
             re.compile(r"\badd\*?\*?\b[^.\n]{0,40}\bkept\b[^.\n]{0,12}nothing"),
             "tanh: out", "relu: mask", "('tanh', ['out'])", "('linear', ['weight', 'input'])",
             "linear: {'input', 'weight'}", "tanh: {'output'}",
             "relu: {'mask'}", "tanh kept its own output", "kept a **mask**",
             "so the output is all it needs", "only the sign matters"] + solution_lines("G11"))


def g1() -> list[Forbidden]:
    return (["outputs_equal=True", "saved_bytes_no_grad=0", "backward_after_no_grad_raises=True",
             "frozen_layer_passes_gradient=True", "holding_tensor_keeps_saved=True",
             "holding_number_keeps_saved=False", "bit for bit: True",
             re.compile(r"no_grad:\s+0 bytes"), re.compile(r"\b0 of \d+ saved arrays alive"),
             "got a gradient through it: True", "frozen layer's weight.grad: None",
             "never what is *computed*", "save nothing", "keeps none", "holds 0 bytes",
             "Refuted above", "still flows *through*"] + solution_lines("G1"))


def w4() -> list[Forbidden]:
    return (["g * out * (1 - out)", "g * s * (1 - s)", "s * (1 - s)", "out * (1 - out)",
             "σ(z)·(1 − σ(z))", "σ(z)(1 − σ(z))", "ctx.save(out=out)", "ctx.load('out')",
             'ctx.load("out")', re.compile(r"\bsigmoid\s*\|\s*out\b"), "sigmoid: out",
             "needs only the output", "in terms of the **output**", "reads its saved output",
             "no exp has to be recomputed"] + backward_lines("W4") + _prose("W4"))


def s4() -> list[Forbidden]:
    import autograd_core as ag
    from widgets.lessons.memory import release_saved

    return (["honest fix is to **recompute**", "honest fix is to recompute", "checkpoint(",
             "gradient checkpointing", "only the segment's input", "a segment's *inputs*",
             "run its forward pass again", "recomputing (checkpointing)",
             "trades compute for memory", "trades compute for it"]  # (and lesson 10's L8)
            + diagnosis_of("S4", ex.S4.snippet, "loss_for_backward",
                           {"ag": ag, "release_saved": release_saved})
            + solution_lines("S4"))


def l7() -> list[Forbidden]:
    per_op = 100 * np.dtype(np.float64).itemsize  # tanh keeps its output: 100 float64 values
    found: list[Forbidden] = [f"{per_op} bytes per op", f"{per_op} B per", f"10 * {per_op}"]
    for n in (10, 20):
        found += [number(n * per_op, "d"), number(n * per_op, ","), f"saved_{n}={n * per_op}"]
    return found + solution_lines("L7")


def t7() -> list[Forbidden]:
    return _said("T7", _verdict(True), *_prose("T7"))


def s3() -> list[Forbidden]:
    # d l_n / dx for l_(k+1) = 4 l_k (1 - l_k): by the chain rule, the product of 4 - 8 l_k
    slopes = []
    for n in (1, 2, 3, 6, 10):
        for x in (0.1, 0.3):
            values = [x]
            for _ in range(n):
                values.append(4 * values[-1] * (1 - values[-1]))
            slopes.append(np.prod([4 - 8 * v for v in values[:-1]]))
    # the local derivative of one level, as code or as text
    local = [re.compile(r"4\s*\*?\s*\(\s*1\s*[-−]\s*2\s*\*?\s*l"),
             re.compile(r"4\s*[-−]\s*8\s*\*?\s*l"), re.compile(r"\(\s*1\s*[-−]\s*2\s*\*?\s*l\s*\)")]
    return (["16(1 − 2x)(1 − 8x + 8x²)", "1 - 8 * x + 8 * x**2", "1 − 8x + 8x²",
             "8x² became 4x²", "let it record"] + local + printed(np.array(slopes))
            + solution_lines("S3"))


def t1() -> list[Forbidden]:
    return _said("T1", _verdict(True), *_prose("T1"))


def t2() -> list[Forbidden]:
    # the law of passes: one pass per input number, one sweep per output number
    return _said("T2", _verdict(False), *_prose("T2"),
                 re.compile(r"prod\(\s*input_shape\s*\)"),
                 re.compile(r"prod\(\s*output_shape\s*\)"),
                 "one pass per input number", "one sweep per output number")


def w2() -> list[Forbidden]:
    # the verdict, its reasoning, and the law the reason is written as
    return _said("W2", _verdict(True), *_prose("W2"), re.compile(r"""["']forward["']\s*:\s*n\b"""),
                 re.compile(r"""["']reverse["']\s*:\s*m\b"""))


def t4() -> list[Forbidden]:
    # the laws: 3 rules per level; the formula (15d + 4)·2^(d−1) − 1, i.e. 7.5 per level once
    # the doubling is divided out; and the sizes at depths beyond those the lesson measures
    sizes = [number((15 * d + 4) * 2 ** (d - 1) - 1, "d") for d in range(8, 15)]
    return _said("T4", _verdict(False), *_prose("T4"), "15d + 4", "15 * d + 4",
                 "15*d + 4", re.compile(r"\b7\.5\s*\*?\s*d\b"), "3 * depth",
                 "3 rules per level", *sizes)


def t5() -> list[Forbidden]:
    # the balance: the best step (3·ε·|f|/|f'''|)^(1/3), the least error there, and f''' at 0.7
    # worked out by hand: with t = tanh x, s = 1 − t², f''' = eˣ(−2s² + 4t²s − 6ts + 3s + t)
    t, s = np.tanh(0.7), 1 - np.tanh(0.7) ** 2
    f3 = np.exp(0.7) * (-2 * s**2 + 4 * t**2 * s - 6 * t * s + 3 * s + t)
    return _said("T5", _verdict(False), *_prose("T5"), "3 * eps * f0 / f3", "3ε·|f|",
                 re.compile(r"\*\*\s*\(\s*1\s*/\s*3\s*\)"), "^(1/3)", "ε^(2/3)",
                 number(f3, ".4f"), number(f3, ".3g"))


# (lesson, item, the item's answers as a lesson could show them). Extend it for other lessons.
# -- lessons 10, 12 and 13: L8, the capstone's tasks, backprop by hand --------------------


def l8() -> list[Forbidden]:
    return ["trades compute for memory", "gradients_identical=True", "saves_less=True",
            "recomputes=True", "114,688", "114688", "1,646,592", "1646592",
            "2 × 8,192 + 4 × 24,576"] + solution_lines("L8")


def c1() -> list[Forbidden]:
    # Groups of modules 0-2 or 0-3 fit the budget (the check's own figures): a stored
    # output that named either would hand the plan over.
    return ["[[0, 1, 2]]", "[[0, 1, 2, 3]]", "[0, 1, 2, 3]]"] + solution_lines("C1")


def c2() -> list[Forbidden]:
    return ['module="5.body.act"', "module='5.body.act'", "'5.body.act' fails",
            "5.body.act fails", "beta=2",
            # the derived backward: the inner factor β on the sigmoid's derivative
            re.compile(r"beta\s*\*\s*x\s*\*\s*s\s*\*\s*\(\s*1\s*-\s*s"),
            re.compile(r"β\s*·?\s*s\s*·?\s*\(\s*1\s*[-−]\s*s")] + solution_lines("C2")


def _by_hand(*rows: str) -> list[Forbidden]:
    from widgets.exercises import by_hand

    grads = by_hand.reference().grads
    found: list[Forbidden] = []
    for row in rows:
        found += printed(grads[row])
    return found


def h1() -> list[Forbidden]:
    return _by_hand("logits", "b2") + solution_lines("H1")


def h2() -> list[Forbidden]:
    return solution_lines("H2")


def h3() -> list[Forbidden]:
    return ["probs - onehot", "softmax minus one-hot) / N"] + solution_lines("H3")


def h4() -> list[Forbidden]:
    return _by_hand("W2") + solution_lines("H4")


def _d_network():
    from widgets.exercises.second_order.problems import network

    return network()


def _network_hessian(net) -> np.ndarray:
    """d²loss/dW² of mean((tanh(X @ W) @ u - y)²) by the closed form, in NumPy."""
    z = net.X @ net.W
    t = np.tanh(z)
    r, n = t @ net.u - net.y, len(net.y)
    a = net.u * (1 - t ** 2)
    outer = 2 / n * np.einsum("na,nj,nb,nl->ajbl", net.X, a, net.X, a)
    c = 2 / n * np.einsum("n,nj,na,nb->ajb", r, net.u * (-2 * t * (1 - t ** 2)), net.X, net.X)
    return outer + np.einsum("ajb,jl->ajbl", c, np.eye(net.W.shape[1]))


def d1() -> list[Forbidden]:
    from widgets.exercises.second_order.problems import tanh_points

    t = np.tanh(tanh_points())
    return (printed(-2 * t * (1 - t ** 2)) + ["-2 * t * (1 - t ** 2)", "-2t(1 - t²)",
                                               "-2 tanh(x)(1 - tanh²(x))"]
            + solution_lines("D1"))


def d2() -> list[Forbidden]:
    hess = _network_hessian(_d_network())
    return printed(hess.reshape(6, 6)) + solution_lines("D2")


def d3() -> list[Forbidden]:
    net = _d_network()
    v = _d3_direction(net)
    return (printed(_network_hessian(net).reshape(6, 6) @ v.ravel())
            + ["(g * v).sum()", "create_graph=True)\n    (hv,)", "jvp(grad(loss_fn)"]
            + solution_lines("D3"))


def _d3_direction(net) -> np.ndarray:
    from widgets.exercises.problems import rng

    return rng(145).standard_normal(net.W.shape)


def d4() -> list[Forbidden]:
    from widgets.exercises.second_order.problems import logistic

    problem, w0 = logistic()
    z = problem.X @ w0
    s = 1 / (1 + np.exp(-z))
    n = len(problem.y)
    g = problem.X.T @ (s - problem.y) / n + problem.lam * w0
    h = problem.X.T @ (problem.X * (s * (1 - s))[:, None]) / n + problem.lam * np.eye(len(w0))
    return (printed(w0 - np.linalg.solve(h, g)) + ["np.linalg.solve(H, g)", "H^{-1} g",
                                                   "H⁻¹g"] + solution_lines("D4"))


def a1() -> list[Forbidden]:
    from widgets.exercises.attention.backward import _engine_gradients

    p = ex.A1.problem()
    grads = _engine_gradients(p.q, p.k, p.v, p.d_out)
    return ([text for g in grads for text in printed(g)]
            + ["(dw * w).sum(axis=1", "w.T @ d_out", "ds.T @ q"] + solution_lines("A1"))


def a2() -> list[Forbidden]:
    from widgets.exercises.attention.saved_bytes import _measured_bytes as measured_bytes

    # The lesson's own sizes are the table the learner derives from; the check's other
    # sizes, and the formula, are the answer.
    others = [measured_bytes(*sizes) for sizes in ((2, 48, 32, 4), (2, 16, 32, 8),
                                                   (3, 24, 48, 2))]
    return ([f"{n:,}" for n in others] + [str(n) for n in others]
            + ["64 * b * s * h", "64bsh", "64 sbh", "64·s·b·h", "16bsh", "16·b·s·h",
               "4 * a * s * s * b", "3·a·s²·b of"] + solution_lines("A2"))


def a3() -> list[Forbidden]:
    return ['[["attention_core"], ["attention_core"]]', "[['attention_core'], ['attention_core']]",
            "recompute only the core", "only the attention core"] + solution_lines("A3")


TABLE: list[tuple[str, str, Callable[[], list[Forbidden]]]] = [
    ("05_matmul_mlp", "G6", g6),
    ("05_matmul_mlp", "G5", g5),
    ("05_matmul_mlp", "G8", g8),
    ("05_matmul_mlp", "G9", g9),
    ("05_matmul_mlp", "G13", g13),
    ("05_matmul_mlp", "G12", g12),
    ("11_debugging", "L9", l9),
    ("11_debugging", "E3", e3),
    ("11_debugging", "W5", w5),
    ("11_debugging", "S2", s2),
    ("06_routing", "G2", g2),
    ("06_routing", "G3", g3),
    ("06_routing", "G10", g10),
    ("06_routing", "B1", b1),
    ("07_convolution", "G7", g7),
    ("07_convolution", "B2", b2),
    ("07_convolution", "B3", b3),
    ("08_batchnorm_dropout", "G14", g14),
    ("08_batchnorm_dropout", "B4", b4),
    ("08_batchnorm_dropout", "B5", b5),
    ("08_batchnorm_dropout", "B6", b6),
    ("08_batchnorm_dropout", "L5", l5),
    ("08_batchnorm_dropout", "L6", l6),
    ("03_reverse_sweep", "T6", t6),
    ("03_reverse_sweep", "T8", t8),
    ("03_reverse_sweep", "T9", t9),
    ("03_reverse_sweep", "T10", t10),
    ("03_reverse_sweep", "S1", s1),
    ("03_reverse_sweep", "S5", s5),
    ("03_reverse_sweep", "S6", s6),
    ("03_reverse_sweep", "E1", e1),
    ("03_reverse_sweep", "E2", e2),
    ("03_reverse_sweep", "E4", e4),
    ("03_reverse_sweep", "E5", e5),
    ("03_reverse_sweep", "E6", e6),
    ("03_reverse_sweep", "W3", w3),
    ("01_start_here", "E2", e2_first),
    ("02_forward_graph", "G4", g4),
    ("02_forward_graph", "L1", l1),
    ("02_forward_graph", "L2", l2),
    ("02_forward_graph", "L3", l3),
    ("02_forward_graph", "W6", w6),
    ("02_forward_graph", "L4", l4),
    ("02_forward_graph", "T3", t3),
    ("02_forward_graph", "W1", w1),
    ("04_memory", "G11", g11),
    ("04_memory", "G1", g1),
    ("04_memory", "W4", w4),
    ("04_memory", "S4", s4),
    ("04_memory", "L7", l7),
    ("04_memory", "T7", t7),
    ("09_modes", "S3", s3),
    ("09_modes", "T1", t1),
    ("09_modes", "T2", t2),
    ("09_modes", "W2", w2),
    ("10_checkpointing", "L8", l8),
    ("12_capstone", "C1", c1),
    ("12_capstone", "C2", c2),
    ("13_backprop_by_hand", "H1", h1),
    ("13_backprop_by_hand", "H2", h2),
    ("13_backprop_by_hand", "H3", h3),
    ("13_backprop_by_hand", "H4", h4),
    ("09_modes", "T4", t4),
    ("09_modes", "T5", t5),
    ("14_higher_order", "D1", d1),
    ("14_higher_order", "D2", d2),
    ("14_higher_order", "D3", d3),
    ("14_higher_order", "D4", d4),
    ("15_transformer_memory", "A1", a1),
    ("15_transformer_memory", "A2", a2),
    ("15_transformer_memory", "A3", a3),
]

# -- where a learner could read them -------------------------------------------------------------

SHOWN = ("text/plain", "text/html", "text/markdown", "text/latex", "image/svg+xml")


def visible_text(nb: dict) -> list[tuple[str, str]]:
    """(where, text) for every cell source and every stored output a learner can read."""
    found = []
    for index, cell in enumerate(nb["cells"]):
        source = cell.get("source", "")
        found.append((f"cell {index} ({cell['cell_type']} source)",
                      "".join(source) if isinstance(source, list) else source))
        for output in cell.get("outputs", []):
            texts = [output.get("text", "")] + [output.get("data", {}).get(kind, "")
                                                 for kind in SHOWN]
            texts += ["\n".join(output.get("traceback", []))]
            for text in texts:
                text = "".join(text) if isinstance(text, list) else text
                if text:
                    found.append((f"cell {index} (stored {output['output_type']})",
                                  html.unescape(text)))
    return found


def leaks(nb: dict, forbidden: Iterable[Forbidden]) -> list[str]:
    """'where: what' for every forbidden string or pattern found in the notebook ``nb``."""
    texts = visible_text(nb)
    found = []
    for item in forbidden:
        for where, text in texts:
            flat = " ".join(text.split())
            if isinstance(item, re.Pattern):
                hit = item.search(text) or item.search(flat)
                what = item.pattern
            else:
                hit = item in text or " ".join(item.split()) in flat
                what = item
            if hit:
                found.append(f"{where}: {what[:80]!r}")
    return found


def read(lesson: str) -> dict:
    return json.loads((NOTEBOOKS / f"{lesson}.ipynb").read_text(encoding="utf-8"))


@pytest.mark.parametrize("lesson, item, answers", TABLE, ids=[f"{a}-{b}" for a, b, _ in TABLE])
def test_no_cell_or_stored_output_shows_the_answer(lesson, item, answers):
    forbidden = answers()
    assert forbidden, f"{item}: no answer to look for"
    found = leaks(read(lesson), forbidden)
    assert not found, (
        f"{lesson} shows the answer of {item}:\n  " + "\n  ".join(found[:15])
        + "\nLead the learner to it instead; put the worked answer in the item's help "
          "(texts.toml) and any comparison that gives it away behind after_solving(...).")


@pytest.mark.parametrize("lesson", sorted({row[0] for row in TABLE}))
def test_every_item_the_lesson_asks_is_in_the_table(lesson):
    from widgets.exercises.tracking import LESSONS

    asked = set(LESSONS[lesson.split("_")[0]][1])
    covered = {item for name, item, _ in TABLE if name == lesson}
    assert asked <= covered, f"{lesson}: items with no row in TABLE: {sorted(asked - covered)}"


@pytest.mark.parametrize("lesson", sorted({row[0] for row in TABLE}))
def test_exercise_cells_and_gated_comparisons_show_sentences(lesson):
    """As stored (a fresh start), an exercise cell shows the check's sentence, and a cell
    behind after_solving shows the sentence that says which item to solve first."""
    nb = read(lesson)
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        outputs = cell.get("outputs", [])
        meant_to_fail = "raises-exception" in cell.get("metadata", {}).get("tags", [])
        assert meant_to_fail or not [o for o in outputs if o["output_type"] == "error"], \
            f"{lesson} cell {index} stores a traceback"
        if "after_solving(" in source:
            shown = "".join("".join(o.get("data", {}).get("text/plain", "")) for o in outputs)
            assert "gives" in shown and "answer away" in shown, \
                f"{lesson} cell {index}: a gated comparison stored something else: {shown[:200]}"


def test_the_finder_finds_a_printed_answer_and_a_formula():
    p = ex.G6.problem()
    with np.printoptions(precision=4, suppress=True):
        shown = str(p.G @ p.B.T)
    nb = {"cells": [
        {"cell_type": "markdown", "source": "so **dA = G Bᵀ**, and"},
        {"cell_type": "code", "source": "print(dA)",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": shown + "\n"}]},
        {"cell_type": "code", "source": "x",
         "outputs": [{"output_type": "execute_result",
                      "data": {"text/html": "<pre>3.14159 and 10.2500</pre>"}}]},
    ]}
    found = leaks(nb, g6())
    assert any("cell 0" in f for f in found) and any("cell 1" in f for f in found)
    assert not leaks(nb, [number(0.25, ".2f"), number(3.1416, ".4f")])  # whole numbers only


# -- a demonstration of a mistake runs on a problem of its own -----------------------------------

def _right_answers(item: str, p) -> dict:
    """The item's right answers for its problem ``p``, computed here (as in the rows above)."""
    if item == "G2":
        return _g2_answers(p)
    if item == "G3":
        return _pool_answers(p)
    if item == "G14":
        return {"dx": _bn_answer(p)}
    if item == "W5":  # by hand: σ' = σ(1 − σ)
        s = 1 / (1 + np.exp(-p.z))
        return {"dz": p.G * s * (1 - s)}
    if item == "L5":
        running_mean, running_var = 0.1 * p.x.mean(axis=0), 0.9 + 0.1 * p.x.var(axis=0, ddof=1)
        return {"kept_value": 1 / (1 - p.p), "dropout_eval": p.z,
                "batchnorm_eval": (p.z - running_mean) / np.sqrt(running_var + 1e-5)}
    dx, dw = _conv_answers(p)
    return {"dx": dx, "dw": dw}


def _arrays(answers: dict) -> dict:
    return {k: v for k, v in answers.items() if isinstance(v, np.ndarray)}


# (item, the keywords of the other problem a lesson demonstrates a mistake on)
DEMO_PROBLEMS = [("G2", {"size": 8}), ("G3", {"size": 6}), ("G14", {"batch_size": 4}),
                 ("L5", {"batch_size": 5}), ("G7", {"stride": 1, "padding": 1}),
                 ("W5", {"z": np.array([-1.0, 3.0, 7.0, 12.0]), "G": 500.0})]


@pytest.mark.parametrize("item, other", DEMO_PROBLEMS, ids=[d[0] for d in DEMO_PROBLEMS])
def test_a_demonstration_runs_on_a_problem_of_its_own(item, other):
    """06, 07 and 08 show a mistake's diagnosis on another problem of the same item: its data
    differ, its check takes the same keywords, and the exercise's answers do not carry over."""
    exercise = ex.registry()[item]
    mine, theirs = exercise.problem(), exercise.problem(**other)
    arrays = [k for k in mine if isinstance(mine[k], np.ndarray)]
    assert any(np.shape(mine[k]) != np.shape(theirs[k]) or not np.allclose(mine[k], theirs[k])
               for k in arrays)
    if getattr(next(iter(exercise._checks.values())), "gradients", None) is not None:
        # the Gradients kind: the learner's function of the problem; arrays worked out for
        # the exercise's own problem, handed back whatever the problem, do not carry over
        assert exercise.check(lambda q: _right_answers(item, q)).ok
        assert exercise.demo(lambda q: _right_answers(item, q), **other).ok
        assert not exercise.demo(lambda q: _right_answers(item, mine), **other).ok
        return
    assert exercise.check(**_right_answers(item, mine)).ok
    # a demonstration grades arrays only: L5's kept value is the same on every problem
    assert exercise.demo(**_arrays(_right_answers(item, theirs)), **other).ok
    assert not exercise.demo(**_arrays(_right_answers(item, mine)), **other).ok


@pytest.mark.parametrize("item, other, words", [
    ("G2", {"size": 99}, "3 to 20"), ("G3", {"size": 5}, "even side"),
    ("G14", {"batch_size": 1}, "2 to 32"), ("L5", {"batch_size": "8"}, "2 to 32"),
    ("H1", {"batch": 1}, "2 to 256")])
def test_an_unknown_other_problem_gets_a_sentence(item, other, words):
    result = ex.registry()[item].demo(**other)
    assert not result.ok and words in result.message
