"""The graph and what backward reads: G1 (recording vs inference), G2 (max/ReLU routing),
G3 (pooling backward), G11 (what each op keeps, and the backward that reads only that).
G4 (the order of the reverse sweep) is in :mod:`.sweep_order`."""

from __future__ import annotations

from contextlib import nullcontext
from functools import lru_cache

import numpy as np

import autograd_core as ag
from autograd_core.tools import memory as ag_memory
from autograd_core.tools.graph import saved_bytes

from .. import gate
from ..feedback.context import Mistake
from ..feedback.result import Result
from ..feedback.tolerance import mismatches, tolerance_for
from ..lessons.report import Report
from . import laws
from .array_answers import Gradients, gradients
from .backward_specs import BackwardSpec
from .exercise import Exercise, register
from .keeping import Keeping, keeping
from .parts import answers
from .predictions import Fact, check_fact
from .problems import Problem, distinct, learner_name, rng


def _functional():
    from autograd_core.nn import functional

    return functional


# -- G1: recording vs inference ---------------------------------------------------------------


def _two_layers(x, w1, w2):
    F = _functional()
    return F.linear(ag.tanh(F.linear(x, w1)), w2).sum()


@gate.answers("G1")
def recording_vs_inference(memory: bool = False) -> Report:
    """The same model and input with recording on, and under ``no_grad``; a frozen first
    layer; and what holding a graph-attached tensor keeps alive. ``memory=True`` adds the
    peak and held memory of each forward pass, measured with tracemalloc (machine- and
    NumPy-version-dependent, so not in the default, stored output). The memory figures
    are the engine's own tools' (``autograd_core.tools.memory``)."""
    g = rng(1)
    data = g.standard_normal((32, 16))
    w1, w2 = (ag.tensor(g.standard_normal(s), requires_grad=True) for s in ((64, 16), (4, 64)))
    x = ag.tensor(data, requires_grad=True)
    recorded = _two_layers(x, w1, w2)
    with ag.no_grad():
        inferred = _two_layers(x, w1, w2)
    try:
        inferred.backward()
        error = ""
    except RuntimeError as exc:
        error = str(exc).splitlines()[0].rstrip(".")
    w1.requires_grad = False  # freeze the first layer: recording still happens around it
    _two_layers(x, w1, w2).backward()
    frozen_passes = x.grad is not None and w1.grad is None
    w1_leaf = ag.tensor(w1.numpy(), requires_grad=True)
    kept = ag_memory.what_keeps_the_graph_alive(lambda t: _two_layers(t, w1_leaf, w2),
                                                ag.tensor(data), exclude=(w1_leaf, w2))
    number = _two_layers(ag.tensor(data), w1_leaf, w2).item()
    facts = {
        "outputs_equal": bool(np.array_equal(recorded.numpy(), inferred.numpy())),
        "saved_bytes_recording": saved_bytes(recorded),
        "saved_bytes_no_grad": saved_bytes(inferred),
        "backward_after_no_grad_raises": bool(error),
        "frozen_layer_passes_gradient": frozen_passes,
        "holding_tensor_keeps_saved": kept["hold the loss tensor"] > 0,
        "holding_number_keeps_saved": kept["hold loss.item()"] > 0,
    }
    rows = [(k.replace("_", " "), v) for k, v in facts.items()]
    if memory:
        big = ag.tensor(np.tile(data, (16, 1)))  # a 16x larger batch
        w1_big = ag.tensor(rng(10).standard_normal((64, 16)), requires_grad=True)
        measured = ag_memory.forward_memory(lambda t: _two_layers(t, w1_big, w2), big)
        for mode, (peak, held) in measured.items():
            rows += [(f"{mode}: peak memory during the forward pass (KiB)", _kib(peak)),
                     (f"{mode}: memory still held after it (KiB)", _kib(held))]
    return Report("Recording vs not recording, same model and input",
                  f"Identical outputs; recording keeps {facts['saved_bytes_recording']} bytes "
                  "for backward, no_grad keeps none, and backward after no_grad fails"
                  f"{': ' + error if error else ''}. A frozen layer still passes gradient "
                  f"through; holding the loss tensor (value {number:.4g}) keeps its saved "
                  "tensors alive, holding loss.item() does not.",
                  ("fact", "engine"), rows, data=facts, supports=facts["saved_bytes_no_grad"] == 0)


def _kib(nbytes: int):
    """Bytes in KiB to two significant digits, "< 10" below 10 KiB (stable outputs)."""
    kib = nbytes / 1024
    return "< 10" if kib < 10 else float(f"{kib:.2g}")


_G1_EXPLAIN = {
    "outputs_equal": "Recording changes what is kept, not the arithmetic.",
    "saved_bytes_recording": "Each op keeps exactly what its backward reads (here the linear "
                             "layers' inputs and weights and tanh's output).",
    "saved_bytes_no_grad": "Under no_grad nothing is recorded, so nothing is kept.",
    "backward_after_no_grad_raises": "There is no recorded graph to go back through.",
    "frozen_layer_passes_gradient": "Freezing (requires_grad=False) only stops the weight's own "
                                    "gradient; earlier tensors still get theirs through it.",
    "holding_tensor_keeps_saved": "A graph-attached tensor references its graph, and the "
                                  "graph references every saved array.",
    "holding_number_keeps_saved": "A Python float has no graph.",
}


def _g1_facts() -> dict[str, Fact]:
    """What the engine shows, one fact per yes/no of ``G1(outputs_equal=..., ...)`` (the
    bytes kept are the law ``kept_bytes``, checked on MLPs drawn at check time)."""
    facts = dict(_g1_measured(learner_name()))
    for number in ("saved_bytes_recording", "saved_bytes_no_grad"):
        facts.pop(number)  # the law gives them, for any MLP
    return {k: Fact(v, _G1_EXPLAIN[k]) for k, v in facts.items()}


@lru_cache(maxsize=8)
def _g1_measured(learner: str | None) -> dict:
    """G1's facts for one learner's problem, measured once: the experiment collects the
    garbage three times to see what a held loss keeps alive, too slow to repeat on every
    check (``learner`` keys the cache: the data are drawn for that learner)."""
    with gate.quietly():  # G1's own check
        return dict(recording_vs_inference().data)


def _g1_mlp_bytes(width: int, depth: int, batch: int, frozen: tuple, no_grad: bool) -> int:
    """Bytes a forward pass of ``depth`` layers tanh(linear(h, W)) (bias-free, float64,
    width x width weights) keeps for backward on a (batch, width) input that needs no
    gradient, the weights of the layers in ``frozen`` frozen, under no_grad or not: measured
    by the engine, here."""
    g = laws.draw
    h = ag.tensor(g.standard_normal((batch, width)))
    weights = [ag.tensor(g.standard_normal((width, width)), requires_grad=i not in frozen)
               for i in range(depth)]
    F = _functional()
    with ag.no_grad() if no_grad else nullcontext():
        for w in weights:
            h = ag.tanh(F.linear(h, w))
        loss = h.sum()
    return saved_bytes(loss)


def _g1_cases() -> list[tuple]:
    """MLPs drawn now: one plain training pass, one with its first layers frozen, one with a
    layer in the middle frozen, one under no_grad."""
    d = laws.draw

    def mlp():
        return int(d.integers(3, 9)), int(d.integers(3, 7)), int(d.integers(2, 9))

    (w1, n1, b1), (w2, n2, b2), (w3, n3, b3), (w4, n4, b4) = mlp(), mlp(), mlp(), mlp()
    first = tuple(range(int(d.integers(1, n2 - 1))))
    middle = (int(d.integers(1, n3 - 1)),)
    return [(w1, n1, b1, (), False), (w2, n2, b2, first, False), (w3, n3, b3, middle, False),
            (w4, n4, b4, (), True)]


def _g1_counted(width: int, batch: int, arrays: float, weights: float) -> float:
    """The bytes of a count of (batch, width) arrays and (width, width) weights, float64."""
    return float(8 * (arrays * batch * width + weights * width * width))


def _g1_first(depth: int, frozen) -> int:
    """The first layer whose weight needs a gradient (depth if none does)."""
    return next((i for i in range(depth) if i not in frozen), depth)


def _g1_slips() -> tuple[laws.Slip, ...]:
    def kept(arrays, weights):
        def law(width, depth, batch, frozen, no_grad):
            if no_grad:
                return None
            r = depth - _g1_first(depth, tuple(frozen))
            return _g1_counted(width, batch, arrays(r, depth, frozen), weights(r, depth, frozen))
        return law

    def recorded(width, depth, batch, frozen, no_grad):  # as if no_grad recorded
        r = depth - _g1_first(depth, tuple(frozen))
        return _g1_counted(width, batch, r + 1, r - 1) if no_grad else None

    return (
        laws.Slip(recorded, "under no_grad nothing is recorded, so nothing is kept: no "
                  "backward can follow.", "no_grad_keeps"),
        laws.Slip(kept(lambda r, n, f: n + 1, lambda r, n, f: n - 1), "freezing the first "
                  "layers changes what is recorded: a layer whose input and weight need no "
                  "gradient records nothing, since no gradient will pass through it.",
                  "frozen_ignored"),
        laws.Slip(kept(lambda r, n, f: n - len(f) + 1, lambda r, n, f: n - len(f) - 1),
                  "you left every frozen layer out, as if freezing stopped recording: a frozen "
                  "layer after a trainable one still records, since the gradient has to pass "
                  "through it to the layers before.", "frozen_not_recorded"),
        laws.Slip(kept(lambda r, n, f: r + 1, lambda r, n, f: r), "the first recorded linear "
                  "keeps its weight, but its input needs no gradient: what would the weight "
                  "be read for?", "first_weight"),
        laws.Slip(kept(lambda r, n, f: 2 * r, lambda r, n, f: r - 1), "you counted tanh's "
                  "output and the next linear's saved input as two arrays: they are one "
                  "array, kept once.", "counted_twice"),
        laws.Slip(kept(lambda r, n, f: (r + 1) / 2, lambda r, n, f: (r - 1) / 2), "you "
                  "counted 4 bytes a value: these arrays are float64.", "bytes_per_value"),
    )


def _g1_where(width, depth, batch, frozen, no_grad) -> str:
    how = ("under no_grad" if no_grad else f"with layers {list(frozen)} frozen" if frozen
           else "recording, nothing frozen")
    return f"for width {width}, depth {depth}, batch {batch}, {how}"


def _g1_kept_bytes(kept_bytes) -> Result:
    return laws.check_law(
        "kept_bytes", kept_bytes, _g1_cases(), _g1_mlp_bytes, _g1_slips(),
        gives="a number of bytes", where=_g1_where,
        hint="which arrays each recorded op keeps for backward, and which ops are recorded "
             "at all.", solved="Your law gives the bytes the engine keeps")


_G1_YES_NO = ("outputs_equal", "backward_after_no_grad_raises",
              "frozen_layer_passes_gradient", "holding_tensor_keeps_saved",
              "holding_number_keeps_saved")


@laws.takes_laws("kept_bytes")
@answers("kept_bytes", *_G1_YES_NO)
def _check_g1(kept_bytes=None, **predictions) -> Result:
    """``G1(kept_bytes=law, outputs_equal=..., ...)``: the law ``kept_bytes(width, depth,
    batch, frozen, no_grad)``, the bytes a forward pass of an MLP keeps for backward, tried on
    MLPs drawn now; and five yes/no predictions about recording, freezing and holding."""
    unknown = [k for k in predictions if k not in _G1_YES_NO]
    if unknown:
        return Result(False, f"G1 has no answer called {unknown[0]!r}; it takes kept_bytes, "
                             f"{', '.join(_G1_YES_NO)}.", diagnosis="unknown_name")
    given = {k: v for k, v in predictions.items() if v is not None}
    if kept_bytes is None and not given:
        return Result(False, "Nothing to check yet: pass your law and your predictions, "
                             "G1(kept_bytes=your_function, outputs_equal=..., ...).",
                      diagnosis="none")
    facts = _g1_facts()
    parts = [] if kept_bytes is None else [_g1_kept_bytes(kept_bytes)]
    parts += [check_fact(k, v, facts[k]) for k, v in given.items()]
    return Result.combine(parts)


register(Exercise(
    "G1", "prediction", {"predict": _check_g1}, level="J",
    experiment=recording_vs_inference,
))


# -- G2: elementwise max and ReLU ---------------------------------------------------------


G2_SIZE = 5  # the exercise's problem; another size is another problem (a lesson's demo)


def g2_problem(size: int = G2_SIZE) -> Problem:
    """a, b with one tie (index 2), x for ReLU with an exact 0 (index 1), upstream G; five
    entries each (``size`` draws another problem of that many entries, 3 to 20)."""
    if not isinstance(size, int) or isinstance(size, bool) or not 3 <= size <= 20:
        raise ValueError(f"G2 has problems of 3 to 20 entries, not {size!r}.")
    g = rng(2) if size == G2_SIZE else rng(200 + size)
    a, b = g.standard_normal(size), g.standard_normal(size)
    b[2] = a[2]
    x = g.standard_normal(size)
    x[1] = 0.0
    return Problem("m = maximum(a, b) elementwise and r = relu(x); G = dL/dm = dL/dr. Find da, "
                   "db (note the tie at index 2) and dx (note x[1] = 0).", a=a, b=b, x=x,
                   G=g.standard_normal(size) + 2)


def _g2_tie(side: str, gave: str, rule: str) -> str:
    """What G2 says to a tie given one side's rule: the kind of slip and where, never the
    convention itself, which lesson 06 asks the learner to derive."""
    return (f"At the tie (index 2) you gave {side} {gave}, the {rule}'s rule; at a tie neither "
            f"a nor b is the {rule}. Go back to step 3 of section 1: what do its two demands "
            f"leave for {side}?")


def _g2_where(part: str, given, want: np.ndarray, places) -> Result | None:
    """G2's reply to a part wrong in no way the gradient checker names: which kind of
    entry it is wrong at (a loser of the max, a winner, the tie; x below or above 0),
    in at most two sentences, never an index the learner has not been told of, nor a
    value. ``places`` lists (where, sentence, kind); None if no place explains it."""
    answer = np.asarray(given, dtype=np.float64)
    wrong = mismatches(answer, want, tolerance_for(answer.dtype, want.dtype))
    found = [(sentence, kind) for where, sentence, kind in places if np.any(wrong & where)]
    if not found:
        return None
    return Result(False, " ".join(sentence for sentence, _ in found[:2]), name=part,
                  diagnosis=found[0][1], hint="Compare a and b (or x and 0) entry by entry "
                                              "first: which input did m (or r) come from?")


def _g2_places(p: Problem) -> dict[str, list]:
    """Where each part of G2 can be wrong, by the kind of entry, and what to say there."""
    tie, zero = p.a == p.b, p.x == 0
    places = {}
    for part, v, o, wins in (("da", "a", "b", p.a > p.b), ("db", "b", "a", p.b > p.a)):
        places[part] = [
            (~wins & ~tie, f"Where {v} lost the max ({v} < {o}), your {part} sends {v} some "
                           f"gradient, but m did not come from {v} there.", "gradient_to_loser"),
            (wins, f"Where {v} won the max ({v} > {o}), your {part} is not the gradient m "
                   f"passes back: m is {v} itself there.", "winner_not_upstream"),
            (tie, f"At the tie (index 2) your {part} is not what the engine sends: go back "
                  "to step 3 of section 1.", "tie_convention")]
    places["dx"] = [
        (p.x < 0, "Where x < 0, your dx sends x some gradient, but r is the constant 0 "
                  "there.", "relu_negative_passed"),
        (p.x > 0, "Where x > 0, your dx is not the gradient r passes back: r is x itself "
                  "there.", "relu_positive_blocked"),
        (zero, "At x = 0 (index 1) your dx is not what the engine's relu sends: which "
               "comparison does its saved mask make?", "relu_at_zero")]
    return places


def _g2_engine(p: Problem) -> dict:
    a, b, x = (ag.tensor(p[k], requires_grad=True) for k in ("a", "b", "x"))
    ag.maximum(a, b).backward(p.G)
    ag.relu(x).backward(p.G)
    return {"da": a.grad, "db": b.grad, "dx": x.grad}


def _g2_context(p: Problem, right: dict) -> dict:
    win_a = (p.a > p.b) * 1.0
    tie = p.a == p.b
    return {
        "da": dict(of="a", upstream=p.G, mistakes=[
            Mistake(p.G * (win_a + tie), _g2_tie("a", "all of G", "winner"), "",
                    "tie_convention"),
            Mistake(p.G * win_a, _g2_tie("a", "nothing", "loser"), "", "tie_convention")]),
        "db": dict(of="b", upstream=p.G, mistakes=[
            Mistake(p.G * (1 - win_a), _g2_tie("b", "all of G", "winner"), "",
                    "tie_convention"),
            Mistake(p.G * (p.b > p.a), _g2_tie("b", "nothing", "loser"), "",
                    "tie_convention")]),
        "dx": dict(of="x", upstream=p.G, mistakes=[
            Mistake(p.G * (p.x >= 0), "At x = 0 you passed the gradient; the engine's ReLU "
                    "uses gradient 0 at 0 (its mask is x > 0).", "", "relu_at_zero"),
            Mistake(p.G * ((p.x > 0) + 0.5 * (p.x == 0)), "At x = 0 (index 1) you used "
                    "ReLU′(0) = ½; relu is its own op, and its mask is x > 0, so nothing "
                    "passes at exactly 0.", "", "relu_at_zero")]),
    }


_check_g2 = gradients(Gradients(
    "G2", ("da", "db", "dx"), g2_problem, _g2_engine, _g2_context, options={"size": G2_SIZE},
    where=lambda part, given, right, p: _g2_where(part, given, right.numpy(),
                                                  _g2_places(p)[part])),
    """``G2(my_g2)``: your ``my_g2(p) -> {"da": ..., "db": ..., "dx": ...}`` on
    ``G2.problem()``; ``size=`` runs it on ``G2.problem(size)``.""")


# Wrong checks before a right answer counts as found by search: a few slips at the tie or
# at 0 and their repair fit; flipping entries between 0 and G until each part is right
# does not.
G2_TRIES = 6
register(Exercise("G2", "derivation", {"gradients": _check_g2}, level="J", problem=g2_problem,
                  tries=G2_TRIES))


# -- G3: pooling backward -----------------------------------------------------------------


G3_SIZE = 4  # the exercise's 4x4 image; another even size is another problem


def g3_problem(size: int = G3_SIZE) -> Problem:
    """A 4x4 image (distinct values: no ties) and the upstream gradient of a 2x2 pool
    (``size``: another even side length, 2 to 12, draws another problem)."""
    if (not isinstance(size, int) or isinstance(size, bool) or size % 2
            or not 2 <= size <= 12):
        raise ValueError(f"G3 has images with an even side of 2 to 12, not {size!r}.")
    g = rng(3) if size == G3_SIZE else rng(300 + size)
    half = size // 2
    return Problem(f"y = max_pool2d(x, 2) and z = avg_pool2d(x, 2) on one {size}x{size} channel "
                   f"(shape (1, 1, {size}, {size})); G = dL/dy = dL/dz, shape (1, 1, {half}, "
                   f"{half}). Find dx_max and dx_avg.", x=distinct(g, 1, 1, size, size),
                   G=g.standard_normal((1, 1, half, half)) + 1)


def _g3_engine(p: Problem) -> dict:
    F = _functional()
    x1, x2 = (ag.tensor(p.x, requires_grad=True) for _ in range(2))
    F.max_pool2d(x1, 2).backward(p.G)
    F.avg_pool2d(x2, 2).backward(p.G)
    return {"dx_max": x1.grad, "dx_avg": x2.grad}


def _g3_context(p: Problem, right: dict) -> dict:
    spread = np.repeat(np.repeat(p.G, 2, axis=2), 2, axis=3)
    half = p.x.shape[-1] // 2
    windows = p.x.reshape(half, 2, half, 2).transpose(0, 2, 1, 3)
    smallest = (windows == windows.min(axis=(2, 3), keepdims=True)).transpose(0, 2, 1, 3)
    return {
        "dx_max": dict(of="x", mistakes=[
            Mistake(spread * smallest.reshape(p.x.shape), "You sent each window's gradient "
                    "to its smallest input (the argmin); max pooling sends it to the input "
                    "that won the forward max.", "", "pool_argmin"),
            Mistake(spread / 4, "You spread the gradient evenly over each window, as average "
                    "pooling does; max pooling sends all of it to the window's maximum.",
                    "Find the argmax of each window.", "pool_spread"),
            Mistake(spread, "You gave every input of the window the whole gradient; only "
                    "the maximum gets it, the others get 0.", "", "pool_spread")]),
        "dx_avg": dict(of="x", mistakes=[
            Mistake(spread, "You gave each input the whole upstream gradient; average "
                    "pooling shares it among the k² inputs of its window.", "",
                    "missing_1_over_k2"),
            Mistake(right["dx_max"].numpy(), "That is max pooling's gradient; average "
                    "pooling gives every input of the window 1/k² of it.", "",
                    "pool_max")]),
    }


_check_g3 = gradients(Gradients(
    "G3", ("dx_max", "dx_avg"), g3_problem, _g3_engine, _g3_context, options={"size": G3_SIZE}),
    """``G3(my_g3)``: your ``my_g3(p) -> {"dx_max": ..., "dx_avg": ...}`` on
    ``G3.problem()``; ``size=`` runs it on ``G3.problem(size)``.""")


register(Exercise("G3", "derivation", {"gradients": _check_g3}, level="J", problem=g3_problem))


# -- G11: what each op keeps, and the backward that reads only that ---------------------------


def _linear_slips(arrays, g, params):
    x, _, _ = arrays
    rows = "is used by every row of the batch, so what each row sends back adds up (no 1/N)."
    return {"dweight": [Mistake(g.T @ x / len(x), f"Your dweight averages over the batch; the "
                                f"weight {rows}", "", "batch_mean")],
            "dbias": [Mistake(g.mean(axis=0), f"Your dbias averages g over the batch; the "
                              f"bias {rows}", "", "batch_mean")]}


def _tanh_slips(arrays, g, params):
    (x,), out = arrays, params["out"]
    return {"dinput": [
        Mistake(g * (1 - np.tanh(out) ** 2), "Your dinput takes tanh of the output again: "
                "what tanh keeps as its output is tanh(input) already.", "", "tanh_twice"),
        Mistake(g * (1 - x ** 2), "Your dinput treats the input as if it were tanh's "
                "output.", "", "input_for_output"),
        Mistake(g, "Your dinput hands g on unchanged: going back through tanh multiplies it "
                "by tanh's slope at each entry.", "", "missing_activation_derivative")]}


def _relu_slips(arrays, g, params):
    (x,) = arrays
    return {"dinput": [
        Mistake(g * (x < 0), "Your dinput passes g where the input was negative and blocks it "
                "where it was positive: the other way round.", "", "mask_flipped"),
        Mistake(g * np.maximum(x, 0), "Your dinput multiplies g by relu's output; where relu "
                "passes, its output moves one for one with its input, so g passes as it is.",
                "", "times_output"),
        Mistake(g, "Your dinput hands g on everywhere, but where the input was negative "
                "relu's output did not depend on it.", "", "missing_mask")]}


def _add_slips(arrays, g, params):
    return {d: [Mistake(g / 2, f"Your {d} shares g between a and b; add hands each of its "
                        "inputs all of g.", "", "shared")] for d in ("da", "db")}


def _positive(arrays, out):
    return arrays[0] > 0


# Each op's BackwardSpec gives the engine op, the gradients' names and the slips; its
# inputs come from the Keeping's shapes, one draw per case (hence ``tuple`` for inputs).
_RELU_FLOAT = ("Your relu keeps {word}, an array of float64 numbers (8 bytes an entry), for a "
               "backward that asks of each entry only whether the input was positive: an "
               "array of booleans answers that in 1 byte an entry.")
_G11 = (
    Keeping(BackwardSpec("linear", "out = input @ weightᵀ + bias",
                         lambda x, w, b: _functional().linear(x, w, b), tuple,
                         _mistakes=_linear_slips, grads=("dinput", "dweight", "dbias")),
            ("input", "weight", "bias"),
            (((4, 3), (5, 3), (5,)), ((2, 6), (3, 6), (3,)), ((7, 2), (4, 2), (4,))),
            seed=110),
    Keeping(BackwardSpec("tanh", "out = tanh(input)", ag.tanh, tuple, _mistakes=_tanh_slips,
                         grads=("dinput",)),
            ("input",), (((3, 4),), ((5,),), ((2, 3, 2),)), {"mask": _positive},
            {"input": "Your tanh keeps its input, and its backward reads it: tanh' can be "
                      "written from what you kept with less, from an array the forward pass "
                      "has computed anyway, with no tanh (or cosh, or exp) to work out "
                      "again."}, seed=111),
    Keeping(BackwardSpec("relu", "out = max(input, 0)", ag.relu, tuple, _mistakes=_relu_slips,
                         grads=("dinput",)),
            ("input",), (((4, 3),), ((6,),), ((2, 2, 3),)), {"mask": _positive},
            {"input": _RELU_FLOAT, "output": _RELU_FLOAT}, seed=112),
    Keeping(BackwardSpec("add", "out = a + b", lambda a, b: a + b, tuple, _mistakes=_add_slips,
                         grads=("da", "db")),
            ("a", "b"), (((3, 4), (3, 4)), ((5,), (5,)), ((2, 3, 2), (2, 3, 2))),
            wasteful={w: f"Your add_backward reads {w!r}, but add's gradients need nothing from "
                         "the forward pass: g alone gives both (and has their shape)."
                      for w in ("a", "b", "output")}, seed=113),
)

_check_g11 = keeping(_G11, """``G11(linear=(keeps, linear_backward), tanh=..., relu=...,
add=...)``: for each op, the words for what it keeps (from its inputs' names, "output",
and for tanh and relu "mask", the input > 0 as booleans) and a function
``backward(g, kept)`` returning one gradient per input, that reads only ``kept``.""")

register(Exercise("G11", "derivation", {"keeps": _check_g11}, level="S"))
