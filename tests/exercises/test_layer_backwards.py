"""The learner writes the layers' backwards (B2–B6) and a gradient check of their own (B1).

* For every layer spec, a right op written here (independently of the specs, with loops or
  another form of the formula) passes, through ``check_backward`` and through its exercise.
* Each diagnosed mistake is named, on the gradient it belongs to, and no message gives
  away an entry of the expected gradient.
* A backward that is not written yet, returns None, returns too few gradients or one of
  the wrong shape gets a sentence, not a traceback.
* ``my_gradcheck``: right versions pass; one-sided differences, the wrong divisor, all
  entries nudged at once, an entry not put back, a bad step and float32 are each named.
* The items are registered with stepped help, tracked part by part, answered in their
  lessons by a tagged cell, and no stored lesson output shows a solution.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from solutions import solution_text
from test_feedback_malformed import MALFORMED, assert_a_sentence
from test_feedback_no_answer import leaked

import autograd_core as ag
from autograd_core.recording.node import Function
from widgets import exercises as ex
from widgets.course.lesson import graded_cells
from widgets.exercises import backward_check, check_backward
from widgets.exercises.backward_specs import SPECS, gradient_names
from widgets.exercises.tracking import LESSONS, Progress, status

ROOT = Path(__file__).resolve().parents[2]
B_IDS = [i for i in ex.COURSE_IDS if i.startswith("B")]  # this file's items
# B1's check itself, recorded nowhere (what these tests read); a learner calls ex.B1(...)
check_own_gradcheck = ex.B1._checks["fn"]


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))


def variant(base, name, **methods):
    """A copy of the op ``base`` with some methods replaced (plain functions)."""
    body = {k: staticmethod(v) for k, v in methods.items()}
    return type(f"{base.__name__}_{name}", (base,), body)


# -- right ops, written here -------------------------------------------------------------------


def pad(x, p):
    return np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))


def conv_dx(g, w, x_shape, p, flip=True):
    """dx by the gather view: the zero-padded g correlated with the rotated kernel."""
    kh, kw = w.shape[2:]
    gp = np.pad(g, ((0, 0), (0, 0), (kh - 1, kh - 1), (kw - 1, kw - 1)))
    kernel = w[:, :, ::-1, ::-1] if flip else w
    h, wd = x_shape[2] + 2 * p, x_shape[3] + 2 * p
    dxp = np.zeros((x_shape[0], x_shape[1], h, wd))
    for i in range(kh):
        for j in range(kw):
            dxp += np.einsum("nohw,oc->nchw", gp[:, :, i:i + h, j:j + wd], kernel[:, :, i, j])
    return dxp[:, :, p:p + x_shape[2], p:p + x_shape[3]]


def conv_dw_per_image(g, x, w_shape, p):
    """Each image's contribution to dw: (N, O, C, kh, kw)."""
    xp = pad(x, p)
    oh, ow = g.shape[2:]
    out = np.zeros((x.shape[0], *w_shape))
    for i in range(w_shape[2]):
        for j in range(w_shape[3]):
            out[:, :, :, i, j] = np.einsum("nohw,nchw->noc", g, xp[:, :, i:i + oh, j:j + ow])
    return out


class Conv(Function):
    @staticmethod
    def forward(ctx, x, w, padding=1):
        ctx.save(x=x, w=w)
        xp = pad(x, padding)
        kh, kw = w.shape[2:]
        oh, ow = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
        out = np.zeros((x.shape[0], w.shape[0], oh, ow))
        for i in range(kh):
            for j in range(kw):
                out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
        return out

    @staticmethod
    def backward(ctx, g):
        x, w, p = ctx.load("x"), ctx.load("w"), ctx.params["padding"]
        return conv_dx(g, w, x.shape, p), conv_dw_per_image(g, x, w.shape, p).sum(axis=0)


def _conv_parts(ctx, g):
    return ctx.load("x"), ctx.load("w"), ctx.params["padding"]


def _conv_unrotated(ctx, g):
    x, w, p = _conv_parts(ctx, g)
    return conv_dx(g, w, x.shape, p, flip=False), conv_dw_per_image(g, x, w.shape, p).sum(0)


def _conv_one_channel(ctx, g):
    x, w, p = _conv_parts(ctx, g)
    for o in range(w.shape[0]):  # an assignment in the loop: the last channel wins
        dx = conv_dx(g[:, o:o + 1], w[o:o + 1], x.shape, p)
    return dx, conv_dw_per_image(g, x, w.shape, p).sum(0)


def _conv_dw_last_image(ctx, g):
    x, w, p = _conv_parts(ctx, g)
    return conv_dx(g, w, x.shape, p), conv_dw_per_image(g, x, w.shape, p)[-1]


def _conv_dw_per_image(ctx, g):
    x, w, p = _conv_parts(ctx, g)
    return conv_dx(g, w, x.shape, p), conv_dw_per_image(g, x, w.shape, p)


def _conv_dw_mean(ctx, g):
    x, w, p = _conv_parts(ctx, g)
    return conv_dx(g, w, x.shape, p), conv_dw_per_image(g, x, w.shape, p).mean(0)


def _conv_dw_rotated(ctx, g):
    x, w, p = _conv_parts(ctx, g)
    return conv_dx(g, w, x.shape, p), conv_dw_per_image(g, x, w.shape, p).sum(0)[..., ::-1, ::-1]


class Pool(Function):
    """2×2 max pooling, stride 2, with loops; a tie goes to the first maximum."""

    @staticmethod
    def forward(ctx, x):
        n, c, h, w = x.shape
        out = np.zeros((n, c, h // 2, w // 2))
        for idx in np.ndindex(out.shape):
            a, b, i, j = idx
            window = x[a, b, 2 * i:2 * i + 2, 2 * j:2 * j + 2].ravel()
            out[idx] = window.max()
        ctx.save(x=x)
        return out

    @staticmethod
    def backward(ctx, g):
        return (Pool.route(ctx.load("x"), g, "first"),)

    @staticmethod
    def route(x, g, tie):
        dx = np.zeros_like(x)
        for a, b, i, j in np.ndindex(g.shape):
            window = x[a, b, 2 * i:2 * i + 2, 2 * j:2 * j + 2].ravel()
            tops = np.flatnonzero(window == window.max())
            chosen = {"first": tops[:1], "last": tops[-1:], "all": tops, "split": tops}[tie]
            share = g[a, b, i, j] / (len(tops) if tie == "split" else 1)
            for k in chosen:
                dx[a, b, 2 * i + k // 2, 2 * j + k % 2] += share
        return dx


def _pool_tie(tie):
    def backward(ctx, g):
        return (Pool.route(ctx.load("x"), g, tie),)
    return backward


class BatchNorm(Function):
    @staticmethod
    def forward(ctx, x, gamma, beta, eps=1e-5):
        inv = (x.var(axis=0) + eps) ** -0.5
        xhat = (x - x.mean(axis=0)) * inv
        ctx.save(xhat=xhat, inv=inv, gamma=gamma)
        return gamma * xhat + beta

    @staticmethod
    def backward(ctx, g):
        xhat, inv, gamma = ctx.load("xhat"), ctx.load("inv"), ctx.load("gamma")
        n = g.shape[0]
        dgamma, dbeta = np.einsum("nc,nc->c", g, xhat), np.einsum("nc->c", g)
        dx = gamma * inv / n * (n * g - dbeta - xhat * dgamma)
        return dx, dgamma, dbeta


def _bn(paths=("mean", "variance"), dgamma_of=None, dbeta_of=None):
    """A batch-norm backward with some dx paths left out, or other dγ / dβ."""
    def backward(ctx, g):
        xhat, inv, gamma = ctx.load("xhat"), ctx.load("inv"), ctx.load("gamma")
        d = g * gamma
        dx = d - ("mean" in paths) * d.mean(0) - ("variance" in paths) * xhat * (d * xhat).mean(0)
        dgamma = (g * xhat).sum(0) if dgamma_of is None else dgamma_of(g, xhat)
        dbeta = g.sum(0) if dbeta_of is None else dbeta_of(g, xhat)
        return inv * dx, dgamma, dbeta
    return backward


class Dropout(Function):
    @staticmethod
    def forward(ctx, x, p, generator):
        keep = generator.random(x.shape) >= p
        ctx.save(scale=keep / (1 - p))
        return x * keep / (1 - p)

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.load("scale"),)


def _dropout_forward_keeping_nothing(ctx, x, p, generator):
    return x * (generator.random(x.shape) >= p) / (1 - p)


def _dropout_fresh(scale):
    def backward(ctx, g):
        p = ctx.params["p"]
        again = ctx.params["generator"].random(g.shape) >= p
        return (g * again / (1 - p) if scale else g * again,)
    return backward


def _dropout_unscaled(ctx, g):
    return (g * (ctx.load("scale") > 0),)


def _dropout_no_mask(ctx, g):
    ctx.load("scale")
    return (g / (1 - ctx.params["p"]),)


class SoftmaxCE(Function):
    @staticmethod
    def forward(ctx, logits, target):
        top = logits.max(axis=1, keepdims=True)
        logp = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
        ctx.save(logp=logp)
        return np.asarray(-np.mean(logp[np.arange(len(target)), target]))

    @staticmethod
    def backward(ctx, g):
        return (SoftmaxCE.grad(ctx, g),)

    @staticmethod
    def grad(ctx, g, sign=1.0, n=None, one_hot=True):
        logp, target = ctx.load("logp"), ctx.params["target"]
        n = len(target) if n is None else n
        d = np.exp(logp)
        if one_hot:
            np.add.at(d, (np.arange(len(target)), target), -1.0)
        return sign * g * d / n


def _ce(g_factor=True, **kw):
    def backward(ctx, g):
        return (SoftmaxCE.grad(ctx, g if g_factor else np.ones_like(g), **kw),)
    return backward


def _ce_keeping_logits(ctx, logits, target):
    ctx.save(logits=logits)
    return SoftmaxCE.forward(ctx, logits, target)


def _ce_softmax_over_the_batch(ctx, g):
    z = ctx.load("logits")
    probs = np.exp(z - z.max(axis=0)) / np.exp(z - z.max(axis=0)).sum(axis=0)
    ctx.load("logp")
    target = ctx.params["target"]
    np.add.at(probs, (np.arange(len(target)), target), -1.0)
    return (g * probs / len(target),)


# -- the table: spec, op, {part: diagnosis} ----------------------------------------------------

RIGHT = {"conv2d": Conv, "max_pool2d": Pool, "batch_norm": BatchNorm, "dropout": Dropout,
         "softmax_cross_entropy": SoftmaxCE}


def ok(spec):
    return {"forward": "correct", **dict.fromkeys(SPECS[spec].grads, "correct"),
            "saved": "correct"}


def wrong(spec, **codes):
    return {**ok(spec), **codes}


CASES = [
    *((spec, op, ok(spec)) for spec, op in RIGHT.items()),
    ("conv2d", variant(Conv, "unrotated", backward=_conv_unrotated),
     wrong("conv2d", dx="unrotated_kernel")),
    ("conv2d", variant(Conv, "one_channel", backward=_conv_one_channel),
     wrong("conv2d", dx="one_output_channel")),
    ("conv2d", variant(Conv, "dw_last_image", backward=_conv_dw_last_image),
     wrong("conv2d", dw="missing_batch_sum")),
    ("conv2d", variant(Conv, "dw_per_image", backward=_conv_dw_per_image),
     wrong("conv2d", dw="missing_broadcast_sum")),
    ("conv2d", variant(Conv, "dw_mean", backward=_conv_dw_mean),
     wrong("conv2d", dw="batch_mean")),
    ("conv2d", variant(Conv, "dw_rotated", backward=_conv_dw_rotated),
     wrong("conv2d", dw="rotated_dw")),
    ("max_pool2d", variant(Pool, "all", backward=_pool_tie("all")),
     wrong("max_pool2d", dx="tie_all")),
    ("max_pool2d", variant(Pool, "split", backward=_pool_tie("split")),
     wrong("max_pool2d", dx="tie_split")),
    ("max_pool2d", variant(Pool, "last", backward=_pool_tie("last")),
     wrong("max_pool2d", dx="tie_last")),
    ("batch_norm", variant(BatchNorm, "no_mean", backward=_bn(paths=("variance",))),
     wrong("batch_norm", dx="batchnorm_no_mean")),
    ("batch_norm", variant(BatchNorm, "no_variance", backward=_bn(paths=("mean",))),
     wrong("batch_norm", dx="batchnorm_no_variance")),
    ("batch_norm", variant(BatchNorm, "naive", backward=_bn(paths=())),
     wrong("batch_norm", dx="batchnorm_naive")),
    ("batch_norm", variant(BatchNorm, "dgamma_unsummed",
                           backward=_bn(dgamma_of=lambda g, xhat: g * xhat)),
     wrong("batch_norm", dgamma="missing_broadcast_sum")),
    ("batch_norm", variant(BatchNorm, "dbeta_unsummed", backward=_bn(dbeta_of=lambda g, xh: g)),
     wrong("batch_norm", dbeta="missing_broadcast_sum")),
    ("batch_norm", variant(BatchNorm, "dgamma_mean",
                           backward=_bn(dgamma_of=lambda g, xhat: (g * xhat).mean(0))),
     wrong("batch_norm", dgamma="batch_mean")),
    ("batch_norm", variant(BatchNorm, "dbeta_mean", backward=_bn(dbeta_of=lambda g, xh: g.mean(0))),
     wrong("batch_norm", dbeta="batch_mean")),
    ("batch_norm", variant(BatchNorm, "dbeta_last", backward=_bn(dbeta_of=lambda g, xh: g[-1])),
     wrong("batch_norm", dbeta="missing_batch_sum")),
    ("batch_norm", variant(BatchNorm, "dgamma_no_xhat",
                           backward=_bn(dgamma_of=lambda g, xhat: g.sum(0))),
     wrong("batch_norm", dgamma="missing_xhat")),
    ("dropout", variant(Dropout, "unscaled", backward=_dropout_unscaled),
     wrong("dropout", dx="missing_keep_scale")),
    ("dropout", variant(Dropout, "fresh", forward=_dropout_forward_keeping_nothing,
                        backward=_dropout_fresh(scale=True)),
     wrong("dropout", dx="fresh_mask")),
    ("dropout", variant(Dropout, "fresh_unscaled", forward=_dropout_forward_keeping_nothing,
                        backward=_dropout_fresh(scale=False)),
     wrong("dropout", dx="fresh_mask")),
    ("dropout", variant(Dropout, "no_mask", backward=_dropout_no_mask),
     wrong("dropout", dx="missing_mask")),
    ("softmax_cross_entropy", variant(SoftmaxCE, "no_mean", backward=_ce(n=1)),
     wrong("softmax_cross_entropy", dlogits="batch_factor")),
    ("softmax_cross_entropy", variant(SoftmaxCE, "no_one_hot", backward=_ce(one_hot=False)),
     wrong("softmax_cross_entropy", dlogits="missing_one_hot")),
    ("softmax_cross_entropy", variant(SoftmaxCE, "sign", backward=_ce(sign=-1.0)),
     wrong("softmax_cross_entropy", dlogits="sign")),
    ("softmax_cross_entropy", variant(SoftmaxCE, "sign_no_mean", backward=_ce(sign=-1.0, n=1)),
     wrong("softmax_cross_entropy", dlogits="sign+batch_factor")),
    ("softmax_cross_entropy", variant(SoftmaxCE, "axis0", forward=_ce_keeping_logits,
                                      backward=_ce_softmax_over_the_batch),
     wrong("softmax_cross_entropy", dlogits="wrong_axis")),
    ("softmax_cross_entropy", variant(SoftmaxCE, "no_g", backward=_ce(g_factor=False)),
     wrong("softmax_cross_entropy", dlogits="missing_upstream")),
]


def codes_of(result) -> dict:
    return {p.name: p.diagnosis for p in (result.parts or (result,))}


def expected_gradients(spec_name: str) -> dict:
    """What the check compares with, by gradient name (built here as the check builds it)."""
    spec = SPECS[spec_name]
    arrays = spec.inputs()

    def fresh():
        return {**spec.params, **(spec.data() if spec.data else {})}

    with ag.no_grad():
        shape = spec.reference(*[ag.tensor(a) for a in arrays], **fresh()).shape
    g = backward_check._upstream(shape)
    refs = [ag.tensor(a, requires_grad=True) for a in arrays]
    spec.reference(*refs, **fresh()).backward(g)
    return dict(zip(gradient_names(len(arrays), spec), (r.grad.numpy() for r in refs)))


@pytest.mark.parametrize("spec, op, codes", CASES, ids=[c[1].__name__ for c in CASES])
def test_each_layer_backward(spec, op, codes):
    result = check_backward(op, spec)
    assert codes_of(result) == codes, repr(result)
    assert result.ok == all(c == "correct" for c in codes.values())
    assert "Traceback" not in repr(result)
    expected = expected_gradients(spec)
    for part in result.parts:
        assert len(part.message) <= 600
        if part.name in expected and not part.ok:
            found = leaked(part.message, expected[part.name])
            assert not found, f"{part.name} gives away {found}: {part.message}"


@pytest.mark.parametrize("exercise_id, spec", [("B2", "conv2d"), ("B3", "max_pool2d"),
                                               ("B4", "batch_norm"), ("B5", "dropout"),
                                               ("B6", "softmax_cross_entropy")])
def test_each_item_checks_its_layer(exercise_id, spec):
    result = ex.registry()[exercise_id](RIGHT[spec])
    assert result.ok, repr(result)
    assert status(exercise_id) == "solved"
    assert not ex.registry()[exercise_id](Pool if spec == "conv2d" else Conv).ok


def test_the_pool_input_has_ties_of_every_size():
    win = SPECS["max_pool2d"].inputs()[0].reshape(2, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5)
    win = win.reshape(2, 2, 2, 2, 4)
    ties = (win == win.max(axis=-1, keepdims=True)).sum(axis=-1)
    assert {2, 3, 4} <= set(ties.ravel().tolist())


# -- the contract: sentences, not tracebacks -------------------------------------------------


def _not_written(ctx, g):
    raise NotImplementedError("write batch norm's backward")


def _returns_none(ctx, g):
    return None


def _two_of_three(ctx, g):
    return BatchNorm.backward(ctx, g)[:2]


def _dx_transposed(ctx, g):
    dx, dgamma, dbeta = BatchNorm.backward(ctx, g)
    return dx.T, dgamma, dbeta


def _reads_unsaved(ctx, g):
    ctx.load("mean")


def _list_of_grads(ctx, g):
    return list(BatchNorm.backward(ctx, g))


@pytest.mark.parametrize("backward, codes", [
    (_not_written, {"": "none"}),
    (_returns_none, {"": "none"}),
    (_two_of_three, {"": "contract"}),
    (_reads_unsaved, {"": "read_unsaved"}),
    (_dx_transposed, wrong("batch_norm", dx="transpose")),
    (_list_of_grads, ok("batch_norm")),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_broken_backward_gets_a_sentence(backward, codes):
    result = check_backward(variant(BatchNorm, backward.__name__, backward=backward),
                            "batch_norm")
    assert codes_of(result) == codes, repr(result)
    assert "Traceback" not in repr(result) and result.message
    if codes == {"": "none"}:
        assert "not written yet" in result.message


def test_a_placeholder_is_not_recorded_as_a_try():
    ex.B4(variant(BatchNorm, "placeholder", backward=_not_written))
    ex.B4(variant(BatchNorm, "none", backward=_returns_none))
    assert status("B4") == "not started"


def test_an_op_taking_integer_targets_and_a_generator_as_keywords():
    """Non-tensor parameters reach forward as keywords and backward as ctx.params; seeded
    ones are drawn afresh per run, so two checks agree."""
    first, second = check_backward(Dropout, "dropout"), check_backward(Dropout, "dropout")
    assert first.ok and second.ok
    assert check_backward(SoftmaxCE, "softmax_cross_entropy").ok


# -- B1: a gradient check of your own ----------------------------------------------------------


def central(f, x, h=1e-6):
    grad = np.empty_like(x)
    for index in np.ndindex(x.shape):
        nudged = x.copy()
        nudged[index] += h
        up = f(nudged)
        nudged[index] -= 2 * h
        grad[index] = (up - f(nudged)) / (2 * h)
    return grad


def central_in_place(f, x, h=1e-5):
    flat = x.reshape(-1)  # a view: nudges x itself
    grad = np.zeros(x.size)
    for k in range(x.size):
        keep = flat[k]
        flat[k] = keep + h
        up = f(x)
        flat[k] = keep - h
        down = f(x)
        flat[k] = keep
        grad[k] = (up - down) / (2 * h)
    return grad.reshape(x.shape)


def with_divisor(divide):
    def my_gradcheck(f, x, h=1e-6):
        grad = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            nudged = x.copy()
            nudged[index] += h
            up = f(nudged)
            nudged[index] -= 2 * h
            grad[index] = divide(up - f(nudged), h)
        return grad
    return my_gradcheck


def one_sided(f, x, h=1e-6):
    grad, here = np.zeros_like(x), f(x)
    for index in np.ndindex(x.shape):
        nudged = x.copy()
        nudged[index] += h
        grad[index] = (f(nudged) - here) / h
    return grad


def all_at_once(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h) * np.ones_like(x)


def not_put_back(f, x, h=1e-6):
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        x[index] += h
        up = f(x)
        x[index] -= 2 * h
        grad[index] = (up - f(x)) / (2 * h)
    return grad


def rows_at_once(f, x, h=1e-6):
    grad = np.zeros_like(x)
    for i in range(len(x)):
        nudged = x.copy()
        nudged[i] += h
        up = f(nudged)
        nudged[i] -= 2 * h
        grad[i] = (up - f(nudged)) / (2 * h)
    return grad


def in_float32(f, x):
    return central(f, x.astype(np.float32), h=1e-3)


def never_calls_f(f, x):
    return np.zeros_like(x)


ALL = ("smooth", "kink_avoided", "matrix")
B1_CASES = [
    (central, dict.fromkeys(ALL, "correct")),
    (central_in_place, dict.fromkeys(ALL, "correct")),
    (one_sided, dict.fromkeys(ALL, "one_sided")),
    (with_divisor(lambda d, h: d / h), dict.fromkeys(ALL, "divided_by_h")),
    (with_divisor(lambda d, h: d / (4 * h)), dict.fromkeys(ALL, "divided_by_4h")),
    (with_divisor(lambda d, h: d / 2 * h), dict.fromkeys(ALL, "precedence")),
    (with_divisor(lambda d, h: d), dict.fromkeys(ALL, "not_divided")),
    (all_at_once, dict.fromkeys(ALL, "all_at_once")),
    (not_put_back, dict.fromkeys(ALL, "not_restored")),
    (rows_at_once, {"smooth": "correct", "kink_avoided": "correct", "matrix": "all_at_once"}),
    (lambda f, x: central(f, x, h=1e-2), {"smooth": "step_size", "kink_avoided": "correct",
                                          "matrix": "step_size"}),
    (lambda f, x: central(f, x, h=1e-12), dict.fromkeys(ALL, "step_size")),
    (in_float32, dict.fromkeys(ALL, "not_float64")),
    (never_calls_f, dict.fromkeys(ALL, "no_evaluations")),
]


def engine_gradients() -> dict:
    from widgets.exercises.own_gradcheck import FUNCTIONS

    out = {}
    for case in FUNCTIONS:
        t = ag.tensor(case.point(), requires_grad=True)
        case.fn(t).backward()
        out[case.name] = t.grad.numpy()
    return out


@pytest.mark.parametrize("fn, codes", B1_CASES, ids=[str(i) for i in range(len(B1_CASES))])
def test_my_gradcheck(fn, codes):
    result = check_own_gradcheck(fn)
    assert codes_of(result) == codes, repr(result)
    assert result.ok == all(c == "correct" for c in codes.values())
    expected = engine_gradients()
    for part in result.parts:
        assert not leaked(part.message, expected[part.name]), part.message


def test_one_sided_says_how_much_larger_its_error_is():
    message = check_own_gradcheck(one_sided).parts[0].message
    assert "times larger than a central difference's" in message and "h = 1e-06" in message


@pytest.mark.parametrize("fn, code", [(None, "none"), ("my_gradcheck", "type"),
                                      (lambda f, x: 1 / 0, "raised")])
def test_my_gradcheck_not_written_or_broken(fn, code):
    def not_yet(f, x):
        raise NotImplementedError

    assert check_own_gradcheck(not_yet).diagnosis == "none"
    result = check_own_gradcheck(fn)
    assert (result.parts[0].diagnosis if result.parts else result.diagnosis) == code
    assert "Traceback" not in repr(result)


def test_b1_is_solved_only_when_every_function_is():
    ex.B1(rows_at_once)
    assert status("B1") == "in progress"
    assert "2 of 3 parts right" in repr(Progress("B1"))
    ex.B1(central)
    assert status("B1") == "solved"


# -- registration, stepped help, lessons ----------------------------------------------------


@pytest.mark.parametrize("exercise_id", B_IDS)
def test_each_item_has_stepped_help(exercise_id):
    item = ex.registry()[exercise_id]
    assert item.hint and item.skeleton and solution_text(item)
    assert item.skeleton.count("...") > solution_text(item).count("...")  # blanks to fill
    assert exercise_id in item.question
    assert item.skeleton not in repr(item) and solution_text(item) not in repr(item)


@pytest.mark.parametrize("exercise_id", B_IDS)
def test_malformed_answers_get_a_sentence(exercise_id):
    item = ex.registry()[exercise_id]
    for label, bad in MALFORMED.items():
        assert_a_sentence(item(bad), f"{exercise_id}({label})")
        assert not item(bad).ok
    assert_a_sentence(item(op=Conv) if exercise_id == "B1" else item(fn=central),
                      f"{exercise_id} by the wrong name")


def test_b4_needs_every_part():
    ex.B4(variant(BatchNorm, "dgamma_mean",
                  backward=_bn(dgamma_of=lambda g, xhat: (g * xhat).mean(0))))
    assert status("B4") == "in progress"
    assert "4 of 5 parts right" in repr(Progress("B4"))
    ex.B4.demo(BatchNorm)  # a demonstration records nothing
    assert status("B4") == "in progress"
    ex.B4(BatchNorm)
    assert status("B4") == "solved"


def lesson_of(exercise_id: str) -> Path:
    number = next(n for n, (_, ids) in LESSONS.items() if exercise_id in ids)
    return next((ROOT / "notebooks").glob(f"{number}_*.ipynb"))


@pytest.mark.parametrize("exercise_id", B_IDS)
def test_each_item_is_answered_in_its_lesson(exercise_id):
    nb = json.loads(lesson_of(exercise_id).read_text())
    cells = [c for c in graded_cells(nb) if c.exercise == exercise_id]
    assert len(cells) == 1
    shown = json.dumps(nb["cells"][cells[0].cell]["outputs"], ensure_ascii=False)
    assert "✘" in shown and "not written yet" in shown


def solution_lines(exercise_id: str) -> list[str]:
    lines = [" ".join(line.split()) for line in solution_text(ex.registry()[exercise_id])
             .splitlines()]
    return [line for line in lines if len(line) >= 12 and not line.startswith(
        ("def ", "class ", "@"))]


@pytest.mark.parametrize("exercise_id", B_IDS)
def test_no_stored_output_or_text_shows_the_solution(exercise_id):
    """Outputs and every cell's source, except the learner's own cell (the given forward)."""
    nb = json.loads(lesson_of(exercise_id).read_text())
    tagged = [i for i, c in enumerate(nb["cells"]) if "exercise" in c["metadata"].get("tags", [])]
    given = " ".join(" ".join("".join(nb["cells"][i]["source"]).split()) for i in tagged)
    shown = " ".join(" ".join(("".join(c["source"]) if i not in tagged else "") .split())
                     + " " + " ".join(json.dumps(c.get("outputs", []), ensure_ascii=False)
                                      .split()) for i, c in enumerate(nb["cells"]))
    found = [line for line in solution_lines(exercise_id) if line in shown and line not in given]
    assert not found, found


def _forward_per_example(ctx, x, gamma, beta, eps=1e-5):
    return BatchNorm.forward(ctx, x, gamma, beta, eps).sum(axis=1)


def _dgamma_as_text(ctx, g):
    dx, _, dbeta = BatchNorm.backward(ctx, g)
    return dx, "dgamma", dbeta


def test_a_forward_of_the_wrong_shape_stops_before_the_gradients():
    result = check_backward(variant(BatchNorm, "rows", forward=_forward_per_example),
                            "batch_norm")
    assert codes_of(result) == {"forward": "shape", "backward": "forward_shape"}, repr(result)


def test_a_gradient_that_is_not_an_array_gets_a_sentence():
    result = check_backward(variant(BatchNorm, "text", backward=_dgamma_as_text), "batch_norm")
    parts = {p.name: p for p in result.parts}
    assert parts["dx"].ok and parts["dbeta"].ok and not parts["dgamma"].ok
    assert parts["dgamma"].diagnosis == "text" and "(4,)" in parts["dgamma"].message
