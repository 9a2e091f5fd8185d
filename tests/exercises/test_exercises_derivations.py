"""Derivation checks (G2, G3, G5–G7, G9's db, G13, G14, W5, E2, E5, E6, L2): a correct
answer passes, each diagnosable mistake is named, malformed answers get a sentence (E4, G8
and G9's sum_to, answered with a function, are in test_thin_e; E3 in test_e3_slope).

Right answers are computed here independently of the engine: closed-form NumPy,
naive loops (convolution, pooling) or central finite differences. An item of the
Gradients kind (G2, G3, G5, G6, G7, G9, G10, G14, W5, E2, E5, E6, L2, H1) takes them as a
function of the problem, ``G6(lambda p: {...})``: the builders below are such functions
already.
"""

import numpy as np
import pytest

from widgets import exercises as ex


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))


def numeric_vjp(f, x, g, eps=1e-6):
    """g · d f(x)/dx by central differences (float64)."""
    x = np.array(x, dtype=np.float64)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        out[i] = np.sum(g * (f(up) - f(down))) / (2 * eps)
    return out


# -- independent references -------------------------------------------------------------------


def g2_right(p):
    tie = 0.5 * (p.a == p.b)
    return dict(da=p.G * ((p.a > p.b) + tie), db=p.G * ((p.b > p.a) + tie), dx=p.G * (p.x > 0))


def g3_right(p):
    dmax = np.zeros_like(p.x)
    for i in range(2):
        for j in range(2):
            win = p.x[0, 0, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
            k = np.unravel_index(np.argmax(win), win.shape)
            dmax[0, 0, 2 * i + k[0], 2 * j + k[1]] = p.G[0, 0, i, j]
    spread = np.kron(p.G, np.ones((1, 1, 2, 2)))
    return dict(dx_max=dmax, dx_avg=spread / 4), spread


def mlp_right(p):
    n = len(p.x)
    d3 = (p.z3 - p.target) / n
    d2 = (d3 @ p.W3) * (1 - p.a2 ** 2)
    return dict(dW2=d2.T @ p.a1, db2=d2.sum(0), delta1=(d2 @ p.W2) * (1 - p.a1 ** 2)), d2, d3


def conv_backward(x, w, g, stride, padding):
    """Naive loops: y[n,o,i,j] = Σ_c,k,l w[o,c,k,l] x_pad[n,c,i·s+k,j·s+l]."""
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    per_sample = np.zeros((x.shape[0],) + w.shape)
    for n in range(g.shape[0]):
        for o in range(g.shape[1]):
            for i in range(g.shape[2]):
                for j in range(g.shape[3]):
                    patch = xp[n, :, i * stride:i * stride + 3, j * stride:j * stride + 3]
                    per_sample[n, o] += g[n, o, i, j] * patch
                    dxp[n, :, i * stride:i * stride + 3, j * stride:j * stride + 3] += \
                        g[n, o, i, j] * w[o]
    dw = per_sample.sum(0)
    h = x.shape[2]
    return dxp[:, :, padding:padding + h, padding:padding + h], dw, per_sample


def bn_dx(x, gamma, g, eps, ddof=0):
    def f(x):
        return gamma * (x - x.mean(0)) / np.sqrt(x.var(0, ddof=ddof) + eps)
    return numeric_vjp(f, x, g)


# -- the table: (exercise, check name, answers builder, {part: expected diagnosis}) -----------


def _g2(p, kind):
    r = g2_right(p)
    if kind == "right":
        return r, {}
    win_a = (p.a > p.b) * 1.0
    return dict(da=p.G * (win_a + (p.a == p.b)), db=r["db"] / p.G, dx=p.G * (p.x >= 0)), \
        dict(da="tie_convention", db="missing_upstream", dx="relu_at_zero")


def _g3(p, kind):
    r, spread = g3_right(p)
    if kind == "right":
        return r, {}
    return dict(dx_max=spread / 4, dx_avg=spread), dict(dx_max="pool_spread",
                                                         dx_avg="missing_1_over_k2")


def _g5(p, kind):
    r, d2, d3 = mlp_right(p)
    if kind == "right":
        return r, {}
    if kind == "wrong":
        return dict(dW2=len(p.x) * r["dW2"], db2=d2, delta1=(d2 @ p.W2) * (1 - p.z1 ** 2)), \
            dict(dW2="batch_factor", db2="missing_broadcast_sum",
                 delta1="wrong_activation_derivative")
    return dict(dW2=((d3 @ p.W3).T @ p.a1), db2=r["db2"], delta1=d2 @ p.W2), \
        dict(dW2="missing_activation_derivative", db2="correct",
             delta1="missing_activation_derivative")


def _g5_transposed(p, kind):
    r, _, _ = mlp_right(p)
    return dict(dW2=r["dW2"].T), dict(dW2="transpose")


def _g6(p, kind):
    right = dict(dA=p.G @ p.B.T, dB=p.A.T @ p.G)
    if kind == "right":
        return right, {}
    return dict(dA=np.ones_like(p.G) @ p.B.T, dB=p.G.T @ p.A), \
        dict(dA="missing_upstream", dB="transpose")


def _g9(p, kind):
    if kind == "right":
        return dict(db=p.G.sum(0)), {}
    return dict(db=p.G), dict(db="missing_broadcast_sum")


def g13_right(p):
    """By hand: d/dw (x·w − t)² = 2(x·w − t)·x per token; L_sum weighs each real token by
    1, L_seq by 1 / (B · n_b) with n_b its sequence's real tokens; padding by 0."""
    per_token = 2 * (p.x @ p.w - p.t)[..., None] * p.x
    seq_weights = p.mask / (len(p.mask) * p.mask.sum(axis=1, keepdims=True))
    return dict(grad_sum=(p.mask[..., None] * per_token).sum(axis=(0, 1)),
                grad_seq=(seq_weights[..., None] * per_token).sum(axis=(0, 1)))


def _g13(p, kind):
    if kind == "right":
        return g13_right(p), {}
    batch, length = p.mask.shape
    return (dict(grad_sum=batch * length * p.grad_tok, grad_seq=p.grad_tok),
            dict(grad_sum="counted_padding", grad_seq="token_mean"))


def _g14(p, kind):
    inv = 1 / np.sqrt(p.x.var(0) + p.eps)
    if kind == "right":  # the closed form (differences of f are told apart from it)
        xhat, dxhat = (p.x - p.x.mean(0)) * inv, p.G * p.gamma
        return dict(dx=inv * (dxhat - dxhat.mean(0) - xhat * (dxhat * xhat).mean(0))), {}
    return dict(dx=p.G * p.gamma * inv), dict(dx="batchnorm_naive")


def _g14_more(p, kind):
    inv = 1 / np.sqrt(p.x.var(0) + p.eps)
    xhat = (p.x - p.x.mean(0)) * inv
    dxhat = p.G * p.gamma
    return {
        "no variance path": (inv * (dxhat - dxhat.mean(0)), "batchnorm_no_variance"),
        "no mean path": (inv * (dxhat - xhat * (dxhat * xhat).mean(0)), "batchnorm_no_mean"),
        "unbiased variance": (bn_dx(p.x, p.gamma, p.G, p.eps, ddof=1), "unbiased_variance"),
        "forgot gamma": (bn_dx(p.x, np.ones(3), p.G, p.eps), "missing_gamma"),
    }[kind]


def _w5(p, kind):
    s = 1 / (1 + np.exp(-p.z))
    if kind == "right":
        return dict(dz=p.G * s * (1 - s)), {}
    return dict(dz=p.G), dict(dz="missing_activation_derivative")


def test_w5s_layers_are_a_check_of_their_own():
    """W5's chain question is a separate check of the same item (a number, not a function
    of the problem): right with the count worked out here, named as a prediction when
    wrong, and W5 is solved only once both its checks are right."""
    from widgets.exercises.tracking import status

    slope_4 = 1 / (1 + np.exp(-4.0)) * (1 - 1 / (1 + np.exp(-4.0)))
    layers = next(d for d in range(1, 50) if 1000 * slope_4 ** d < 1e-6)  # by hand: 6
    wrong = ex.W5.run("layers", layers=layers - 1)
    assert not wrong.ok and wrong.diagnosis == "prediction", repr(wrong)
    assert ex.W5(lambda q: _w5(q, "right")[0]).ok
    assert status("W5") == "in progress"
    assert ex.W5.run("layers", layers=layers).ok
    assert status("W5").startswith("solved")


def _e2(p, kind):
    # by hand: z_i = k·w_i·x_i + b_i, so dz_i/dk = w_i·x_i, and the sum adds them up
    # (literal_gets_gradient is a prediction check of its own: test_thin_b)
    if kind == "right":
        return dict(dw=2 * p.x, dk=float(np.dot(p.w, p.x))), {}
    return (dict(dw=p.x, dk=2 * float(np.dot(p.w, p.x))),
            dict(dw="missing_constant", dk="kept_literal"))


def _e5_parts(p):
    second = p.t.T @ p.h
    first = p.x.T @ ((p.t @ p.W) * (1 - p.h ** 2))
    return first, second


def _e5(p, kind):
    first, second = _e5_parts(p)
    if kind == "right":
        return dict(dW=first + second), {}
    return dict(dW=second), dict(dW="overwrite")


def _e6(p, kind):
    # by hand, each detached copy a constant c = x: d/dx [c·tanh(x) + x·c²] = c(1 − tanh²x) + c²
    # (value_changes is a prediction check of its own: test_thin_b)
    t = np.tanh(p.x)
    if kind == "right":
        return dict(dx=p.x * (1 - t ** 2) + p.x ** 2), {}
    # nothing detached: d/dx [x·tanh(x) + x³] = tanh x + x(1 − tanh²x) + 3x²
    return dict(dx=t + p.x * (1 - t ** 2) + 3 * p.x ** 2), dict(dx="through_detach")


def _l2(p, kind):
    if kind == "right":
        return dict(da=p.G[:, :3], db=p.G[:, 3:]), {}
    return dict(da=p.G[:, 2:], db=p.G[:, :2]), dict(da="wrong_slice", db="wrong_slice")


CASES = {
    "G2": (_g2, {}), "G3": (_g3, {}), "G5": (_g5, {}), "G6": (_g6, {}),
    "G9": (_g9, {}), "G13": (_g13, {}), "G14": (_g14, {}), "W5": (_w5, {}), "E2": (_e2, {}),
    "E5": (_e5, {}), "E6": (_e6, {}), "L2": (_l2, {}),
}


def of_the_problem(exercise) -> bool:
    """Whether ``exercise``'s main check takes a function of the problem (the Gradients
    kind) rather than the answers themselves."""
    return getattr(next(iter(exercise._checks.values())), "gradients", None) is not None


def run_case(exercise_id, variant):
    """The exercise called with the answers ``CASES`` builds (as a function of the problem
    for the Gradients kind); (result, expected codes)."""
    build, extra = CASES[exercise_id]
    exercise = ex.registry()[exercise_id]
    answers, codes = build(exercise.problem() if exercise.has_problem else None, variant)
    if of_the_problem(exercise):
        return exercise(lambda q: build(q, variant)[0], **extra), codes
    return exercise(**answers, **extra), codes


@pytest.mark.parametrize("exercise_id", CASES)
def test_right_answer_passes(exercise_id):
    result, _ = run_case(exercise_id, "right")
    assert result.ok, repr(result)
    assert "✘" not in repr(result)


@pytest.mark.parametrize("exercise_id", CASES)
def test_each_mistake_is_named(exercise_id):
    result, codes = run_case(exercise_id, "wrong")
    assert not result.ok
    parts = result.parts or (result,)
    got = {p.name: p.diagnosis for p in parts}
    assert got == codes, repr(result)


def test_g5_other_mistakes():
    _, codes = _g5(ex.G5.problem(), "dropped f'")
    got = {r.name: r.diagnosis for r in ex.G5(lambda q: _g5(q, "dropped f'")[0]).parts}
    assert got == codes
    assert ex.G5(lambda q: _g5_transposed(q, "")[0]).diagnosis == "transpose"


def test_g6_square_transpose_is_caught_without_a_shape_error():
    result = ex.G6(lambda q: {"dA": q.G @ q.B.T, "dB": q.G.T @ q.A}, square=True)
    assert [r.diagnosis for r in result.parts] == ["correct", "transpose"]
    assert "square" in result.parts[1].message


@pytest.mark.parametrize("kind", ["no variance path", "no mean path", "unbiased variance",
                                  "forgot gamma"])
def test_g14_partial_batchnorm_gradients(kind):
    _, code = _g14_more(ex.G14.problem(), kind)
    assert ex.G14(lambda q: {"dx": _g14_more(q, kind)[0]}).diagnosis == code


def g7_right(p):
    """G7's answer by naive loops (no engine), for any stride and padding of ``p``."""
    dx, dw, _ = conv_backward(p.x, p.w, p.G, p.stride, p.padding)
    return {"dx": dx, "dw": dw}


def _g7_slips(p):
    """Each slip G7 names, as a function of the problem would make it (no engine)."""
    dx, dw, per_sample = conv_backward(p.x, p.w, p.G, p.stride, p.padding)
    return {"unrotated": conv_backward(p.x, p.w[..., ::-1, ::-1], p.G, p.stride, p.padding)[0],
            "per_sample": per_sample, "rotated_dw": dw[..., ::-1, ::-1],
            "transposed_dw": dw.transpose(1, 0, 2, 3)}


@pytest.mark.parametrize("stride, padding", [(1, 1), (2, 0), (1, 0), (2, 1)])
def test_g7_conv_gradients(stride, padding):
    options = {"stride": stride, "padding": padding}
    assert ex.G7(g7_right, **options).ok
    result = ex.G7(lambda q: {"dx": _g7_slips(q)["unrotated"], "dw": _g7_slips(q)["per_sample"]},
                   **options)
    assert [r.diagnosis for r in result.parts] == ["unrotated_kernel", "missing_broadcast_sum"]
    result = ex.G7(lambda q: {"dw": _g7_slips(q)["rotated_dw"]}, **options)
    assert result.diagnosis == "rotated_kernel_grad"
    assert ex.G7(lambda q: {"dw": _g7_slips(q)["transposed_dw"]}, **options).diagnosis == \
        "transpose"


# -- G7 and L2: a function of the problem, not arrays that fit one problem --------------------


def l2_right(p):
    na = p.a.shape[1]
    return {"da": p.G[:, :na], "db": p.G[:, na:]}


def l2_merges_right(p):
    s = 1 / (1 + np.exp(-p.u))
    t = np.tanh(p.x * p.w)
    winner = p.branches == p.branches.max(axis=0)
    return {"du": p.G_gate * p.h * s * (1 - s), "d_branches": np.where(winner, p.G_pool, 0.0),
            "dw": p.G_reuse * (t + p.w * (1 - t ** 2) * p.x)}


def test_g7_and_l2_are_solved_by_a_numpy_function_of_the_problem():
    from widgets.exercises.tracking import status

    assert ex.G7(g7_right).ok and status("G7") == "in progress"  # the strided part too
    assert ex.G7(g7_right, stride=2, padding=1).ok and status("G7") == "solved"
    assert ex.L2(l2_right).ok and status("L2") == "in progress"  # the merges too
    assert ex.L2.run("merges", l2_merges_right).ok and status("L2") == "solved"


def _disguised(exercise_id, options):
    """The audit's attack: leaves holding disguised copies of the problem's arrays (2 * w,
    used as w2 * 0.5), run through the engine outside any check, their gradients handed
    back by a function that ignores its argument."""
    import autograd_core as ag
    from autograd_core.nn.functional import conv2d

    if exercise_id == "G7":
        p = ex.G7.problem(**options)
        x2 = ag.tensor(2 * p.x, requires_grad=True)
        w2 = ag.tensor(2 * p.w, requires_grad=True)
        conv2d(x2 * 0.5, w2 * 0.5, **options).backward(p.G)
        return {"dx": x2.grad.numpy() * 2, "dw": w2.grad.numpy() * 2}
    if exercise_id == "L2":
        p = ex.L2.problem()
        a2, b2 = (ag.tensor(2 * v, requires_grad=True) for v in (p.a, p.b))
        ag.cat([a2 * 0.5, b2 * 0.5], dim=1).backward(p.G)
        return {"da": a2.grad.numpy() * 2, "db": b2.grad.numpy() * 2}
    q = ex.L2.problem(merges=True)
    u2, br2, w2 = (ag.tensor(2 * v, requires_grad=True) for v in (q.u, q.branches, q.w))
    (ag.sigmoid(u2 * 0.5) * ag.tensor(q.h)).backward(q.G_gate)
    (br2 * 0.5).max(axis=0).backward(q.G_pool)
    w = w2 * 0.5
    (ag.tanh(ag.tensor(q.x) * w) * w).backward(q.G_reuse)
    return {"du": u2.grad.numpy() * 2, "d_branches": br2.grad.numpy() * 2,
            "dw": w2.grad.numpy() * 2}


@pytest.mark.parametrize("exercise_id, check, options", [
    ("G7", "gradients", {}), ("G7", "gradients", {"stride": 2, "padding": 1}),
    ("L2", "gradients", {}), ("L2", "merges", {})])
def test_arrays_from_a_disguised_leaf_are_not_from_the_problem(exercise_id, check, options):
    from widgets.exercises.array_answers import NOT_FROM_P
    from widgets.exercises.tracking import status

    precomputed = _disguised(exercise_id if check == "gradients" else "merges", options)
    exercise = ex.registry()[exercise_id]
    result = exercise.run(check, lambda p: precomputed, **options)
    assert not result.ok, repr(result)
    assert {r.diagnosis for r in result.parts} == {NOT_FROM_P}, repr(result)
    assert all("right on your own problem but not on another problem" in r.message
               for r in result.parts)
    assert status(exercise_id) != "solved"


def test_arrays_passed_the_old_way_get_the_kinds_sentence():
    p = ex.G7.problem()
    result = ex.G7(dx=np.zeros_like(p.x), dw=np.zeros_like(p.w))
    assert result.diagnosis == "call" and "def my_g7(p)" in result.message
    result = ex.L2(da=np.zeros((2, 3)), db=np.zeros((2, 2)))
    assert result.diagnosis == "call" and "def my_l2(p)" in result.message
    result = ex.L2.run("merges", du=np.zeros(4))
    assert result.diagnosis == "call" and "my_l2_merges" in result.message


def _l2_merge_slips(p):
    """Each slip L2's merges check names, built here from the problem (no engine)."""
    s = 1 / (1 + np.exp(-p.u))
    t = np.tanh(p.x * p.w)
    winner = p.branches == p.branches.max(axis=0)
    spread = np.broadcast_to(p.G_pool, p.branches.shape)
    return {
        "du": {"missing_activation_derivative": p.G_gate * p.h, "other_factor": p.G_gate * s},
        "d_branches": {"averaged_paths": spread / 3, "all_paths": spread,
                       "wrong_branch": np.where(winner, 0.0, p.G_pool)},
        "dw": {"one_path": p.G_reuse * t},
    }


@pytest.mark.parametrize("part, code", [(part, code) for part, slips in _l2_merge_slips(
    ex.L2.problem(merges=True)).items() for code in slips])
def test_each_l2_merge_slip_is_named(part, code):
    result = ex.L2.run("merges", lambda q: {part: _l2_merge_slips(q)[part][code]})
    assert not result.ok and result.diagnosis == code, repr(result)


def _rows(ids, G, rows, add: bool):
    """dW by a loop over the lookups: each row of G added to its id's row, or written
    over it (the overwrite)."""
    dW = np.zeros((rows, G.shape[1]))
    for k, i in enumerate(ids):
        dW[i] = dW[i] + G[k] if add else G[k]
    return dW


def _g10(add: bool):
    def my_g10(p):
        dW = _rows(p.ids, p.G, len(p.W), add)
        return {"dW": dW, "row1": dW[1]}
    return my_g10


def test_g10_row_gradient_sums_the_occurrences():
    assert ex.G10(_g10(add=True)).ok
    result = ex.G10(_g10(add=False))
    assert [r.diagnosis for r in result.parts] == ["overwrite", "overwrite"]
    assert ex.G10(lambda q: {"row1": q.G[q.ids == 1].mean(0)}).diagnosis == "averaged_paths"


def test_g10s_fixed_embedding_backward_is_run_on_ids_and_g():
    assert ex.G10.run("fix", lambda ids, G, rows: _rows(ids, G, rows, add=True)).ok
    result = ex.G10.run("fix", lambda ids, G, rows: _rows(ids, G, rows, add=False))
    assert result.diagnosis == "overwrite" and "Still an overwrite" in result.message


# -- malformed answers: a sentence each, never a traceback --------------------------------------

MALFORMED = [None, "dA", [1.0, 2.0], 0.5, np.full((3, 3), np.nan), {"x": 1}, print]
NAMED = [("G2", "da"), ("G3", "dx_max"), ("G5", "dW2"), ("G6", "dA"), ("G7", "dx"),
         ("G9", "db"), ("G13", "grad_sum"), ("G14", "dx"), ("W5", "dz"),
         ("E5", "dW"), ("E6", "dx"), ("L2", "da"), ("G10", "dW")]


MALFORMED_IDS = ["None", "str", "list", "scalar", "nan", "dict", "function"]
SCALAR_ITEMS: set[str] = set()  # items whose every answer is one number (a scalar is one)


@pytest.mark.parametrize("exercise_id, name, answer", [
    pytest.param(i, n, a, id=f"{k}-{i}-{n}") for i, n in NAMED
    for a, k in zip(MALFORMED, MALFORMED_IDS) if not (i in SCALAR_ITEMS and k == "scalar")])
def test_malformed_answers(exercise_id, name, answer):
    exercise = ex.registry()[exercise_id]
    if of_the_problem(exercise):  # what the learner's function returns for the part
        result = exercise(lambda q: {name: answer})
    else:
        result = exercise(**{name: answer})
    assert not result.ok
    assert result.diagnosis in ("none", "text", "shape", "scalar", "nonfinite", "type",
                                "reshape", "missing_reduction", "missing_broadcast_sum"), \
        repr(result)
    assert "Traceback" not in repr(result)


@pytest.mark.parametrize("exercise_id, name", NAMED)
def test_misspelled_answer_name_is_explained(exercise_id, name):
    exercise = ex.registry()[exercise_id]
    if of_the_problem(exercise):  # a key of the dict the learner's function returns
        result = exercise(lambda q: {name.upper() + "x": 1.0})
    else:
        result = exercise(**{name.upper() + "x": 1.0})
    assert result.diagnosis == "unknown_name"
    assert name in result.message


def test_hint_and_solution_on_request_only():
    result = ex.G6(lambda q: {"dA": q.G.T})
    assert "Hint:" not in repr(result)
    assert "Hint:" in repr(ex.G6(lambda q: {"dA": q.G.T}, hint=True))
    assert "B.T" in ex.G6.solution and "B.T" not in repr(result)
    assert result.hint() and result.solution() == ex.G6.solution


# -- G2: where a routing slip is, by the kind of entry; a search is no solving ---------------


def _g2_slips(p):
    """Each slip G2 names by kind and place, built from the problem (one entry each)."""
    right = g2_right(p)
    loser_a = int(np.flatnonzero(p.a < p.b)[0])
    winner_b = int(np.flatnonzero(p.b > p.a)[0])
    below, above = int(np.flatnonzero(p.x < 0)[0]), int(np.flatnonzero(p.x > 0)[0])
    da, db, dx_below, dx_above = (right[k].copy() for k in ("da", "db", "dx", "dx"))
    da[loser_a] = p.G[loser_a]                  # a lost there, yet gets gradient
    db[winner_b] = 0.0                          # b won there, yet gets none
    dx_below[below] = p.G[below]                # relu passed gradient where x < 0
    dx_above[above] = 0.0                       # relu blocked it where x > 0
    return {"gradient_to_loser": ("da", da, "lost the max"),
            "winner_not_upstream": ("db", db, "won the max"),
            "relu_negative_passed": ("dx", dx_below, "x < 0"),
            "relu_positive_blocked": ("dx", dx_above, "x > 0")}


@pytest.mark.parametrize("kind", ["gradient_to_loser", "winner_not_upstream",
                                  "relu_negative_passed", "relu_positive_blocked"])
def test_g2_names_the_kind_of_routing_slip_and_where_never_the_value(kind):
    from test_feedback_no_answer import leaked

    p = ex.G2.problem()
    part, _, where = _g2_slips(p)[kind]
    result = ex.G2(lambda q: {part: _g2_slips(q)[kind][1]})
    assert not result.ok and result.diagnosis == kind, repr(result)
    assert where in result.message and "index [" not in result.message
    assert result.message.count(". ") + result.message.endswith(".") <= 2  # two sentences
    assert not leaked(result.message, g2_right(p)[part]) and not leaked(result.message, p.G)


def test_g2_right_on_another_problem_leaves_the_learners_own_unsolved():
    from widgets.exercises.tracking import status

    assert ex.G2(g2_right, size=8).ok
    assert status("G2") == "in progress"  # problem 8 is not the learner's own
    assert ex.G2(g2_right).ok
    assert status("G2") == "solved"


@pytest.mark.parametrize("wrong_tries, solved", [(2, "solved"),
                                                 (7, "solved after seeing the solution")])
def test_g2_found_by_flipping_entries_is_no_plain_solving(wrong_tries, solved):
    """Flipping each entry between 0 and G until every part is right is a search: past
    G2's tries, a right answer counts as found, not thought."""
    from widgets.exercises.tracking import status

    def flipping(k):
        def my_g2(p):  # entry k % 5 of every part flipped between 0 and G
            flipped = g2_right(p)
            for value in flipped.values():
                i = k % 5
                value[i] = p.G[i] if value[i] == 0 else 0.0
            return flipped
        return my_g2

    for k in range(wrong_tries):
        assert not ex.G2(flipping(k)).ok
    result = ex.G2(g2_right)
    assert result.ok and status("G2") == solved
    assert ("allows" in result.message) == (solved != "solved")
