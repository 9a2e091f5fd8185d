"""Spot the error (S1–S6, G10's overwrite, G12's silent mistakes): the buggy snippet as
shipped is caught and named; a fixed function passes; anything else a learner might
pass gets a sentence."""

import numpy as np
import pytest

import autograd_core as ag
from widgets import exercises as ex
from widgets.exercises.tracking import status


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))


def snippet_function(exercise, name):
    """The function defined by an exercise's buggy snippet."""
    from widgets.lessons.memory import release_saved  # S4's snippet drops what was saved

    scope = {"np": np, "ag": ag, "release_saved": release_saved}
    exec(exercise.snippet, scope)  # noqa: S102 - our own snippet text
    return scope[name]


# -- fixed versions, written independently of the checks -------------------------------------


def s1_fixed(x, y):
    a = x + y
    b = np.tanh(x)
    a_bar, b_bar = b, a
    return a_bar + b_bar * (1 - b ** 2), a_bar


def s1_aliased(x, y):
    a = x + y
    b = np.tanh(x)
    a_bar, b_bar = b, a
    x_bar = a_bar
    y_bar = a_bar
    x_bar += b_bar * (1 - b ** 2)  # also changes y_bar: the same array
    return x_bar, y_bar


def s2_fixed(w, steps, micro):
    grads = []
    for x, t in steps:
        w.grad = None                                  # once per step
        for start in range(0, len(x), micro):
            xs, ts = x[start:start + micro], t[start:start + micro]
            (((xs @ w - ts) ** 2).mean() * (len(xs) / len(x))).backward()
        grads.append(w.grad.numpy().copy())
    return grads


def s3_fixed(x, n):
    # forward pass keeping every l_k, then the reverse sweep by hand (no engine needed)
    ls = [x]
    for _ in range(n):
        ls.append(4 * ls[-1] * (1 - ls[-1]))
    bar = 1.0
    for l in reversed(ls[:-1]):
        bar *= 4 - 8 * l
    return bar


def s4_checkpoint(w1, w2, x):
    from autograd_core.utils.checkpoint import checkpoint

    return checkpoint(lambda t: ag.sigmoid(ag.tanh(t @ w1) @ w2), x, parameters=[w1, w2]).sum()


def s4_by_hand(w1, w2, x):
    """sigmoid(tanh(x @ w1) @ w2) as one op that keeps nothing but its inputs and runs the
    forward pass again, recording, when backward reaches it: checkpointing written by hand."""
    from autograd_core.recording.node import Function

    class Recomputed(Function):
        name = "recomputed_block"

        @staticmethod
        def forward(ctx, x_, a, b):
            ctx.save(x=x_)  # the input only; the weights are held by the program anyway
            ctx.weights = (a, b)
            return 1 / (1 + np.exp(-(np.tanh(x_ @ a) @ b)))

        @staticmethod
        def backward(ctx, g):
            a, b = (ag.tensor(v, requires_grad=True) for v in ctx.weights)
            with ag.enable_grad():
                ag.sigmoid(ag.tanh(ag.tensor(ctx.load("x")) @ a) @ b).backward(g)
            return None, a.grad.numpy(), b.grad.numpy()

    return Recomputed.apply(x, w1, w2).sum()


def s4_keeps_everything(w1, w2, x):
    return ag.sigmoid(ag.tanh(x @ w1) @ w2).sum()


def s4_no_graph(w1, w2, x):
    with ag.no_grad():
        return ag.sigmoid(ag.tanh(x @ w1) @ w2).sum()


def s5_fixed(w, x, b, t):
    return (w * x + b - t) * x


def s6_fixed(w1, wa, wb, x):
    h = ag.tanh(x @ w1)
    (((h @ wa) ** 2).sum() + ag.tanh(h @ wb).sum()).backward()
    return w1.grad.numpy(), wa.grad.numpy(), wb.grad.numpy()


def g10_fixed(ids, G, rows):
    dW = np.zeros((rows, G.shape[1]))
    np.add.at(dW, ids, G)
    return dW


def g12_fixed(p):
    n = len(p.x)
    d3 = (p.z3 - p.target) / n
    d2 = (d3 @ p.W3) * (1 - p.a2 ** 2)
    return {"dW2": d2.T @ p.a1, "db2": d2.sum(0), "delta1": (d2 @ p.W2) * (1 - p.a1 ** 2)}


# (exercise, check name, the snippet's function name, a fixed function)
FIXES = [
    ("S1", "fixed", "grads", s1_fixed),
    ("S2", "fixed", "step_gradients", s2_fixed),
    ("S3", "fixed", "derivative", s3_fixed),
    ("S4", "fixed", "loss_for_backward", s4_checkpoint),
    ("S4", "fixed", "loss_for_backward", s4_by_hand),
    ("S5", "fixed", "grad_w", s5_fixed),
    ("S6", "fixed", "gradients", s6_fixed),
    ("G10", "fix", "embedding_backward", g10_fixed),
    ("G12", "fixed", "backprop", g12_fixed),
]

# (exercise, check name, snippet function, {part name: diagnosis} of the snippet as shipped)
BUGS = [
    ("S1", "fixed", "grads", {"x_bar": "overwrite", "y_bar": "correct"}),
    ("S2", "fixed", "step_gradients", {
        f"step {k}, micro-batches of {m}": "sum_of_means" if k == 1 else
        "not_reset+sum_of_means" for m in (4, 3) for k in (1, 2, 3)}),
    ("S3", "fixed", "derivative", {"derivative": "expansion_slip"}),
    ("S4", "fixed", "loss_for_backward", {"": "freed"}),
    ("S5", "fixed", "grad_w", {"dL/dw": "missing_upstream"}),
    ("S6", "fixed", "gradients", {"dw1": "correct", "dwa": "correct", "dwb": "correct",
                                  "passes": "extra_passes"}),
    ("G10", "fix", "embedding_backward", {"dW": "overwrite"}),
    ("G12", "fixed", "backprop", {"dW2": "transpose+batch_factor", "db2": "batch_factor",
                                  "delta1": "batch_factor+wrong_activation_derivative"}),
]


def parts(result):
    return {p.name: p.diagnosis for p in (result.parts or (result,))}


@pytest.mark.parametrize("exercise_id, check, _, fixed", FIXES,
                         ids=[f"{f[0]}-{f[3].__name__}" for f in FIXES])
def test_fixed_function_passes(exercise_id, check, _, fixed):
    result = ex.registry()[exercise_id].run(check, fixed)
    assert result.ok, repr(result)


@pytest.mark.parametrize("exercise_id, check, name, codes", BUGS, ids=[b[0] for b in BUGS])
def test_the_snippet_as_shipped_is_caught_and_named(exercise_id, check, name, codes):
    exercise = ex.registry()[exercise_id]
    result = exercise.run(check, snippet_function(exercise, name))
    assert not result.ok
    assert parts(result) == codes, repr(result)


def test_s1_aliasing_is_named():
    assert parts(ex.S1(s1_aliased)) == {"x_bar": "correct", "y_bar": "aliased"}


def test_s4_keeping_the_whole_graph_gives_right_gradients_and_saves_nothing():
    """S4's mistake is "keep only the output to save memory". Keeping everything instead (the
    plain forward pass; retain_graph keeps the same) passes backward but is not the fix: the
    check asks for right gradients AND no intermediate held until backward, as lesson 04
    does. Recomputing (checkpointing, s4_checkpoint and s4_by_hand above) is."""
    result = ex.S4(s4_keeps_everything)
    assert parts(result) == {"dw1": "correct", "dw2": "correct", "memory": "keeps_intermediates"}
    assert not result.ok


def test_s4_without_a_graph_gets_a_sentence():
    result = ex.S4(s4_no_graph)
    assert not result.ok and result.diagnosis == "no_graph"
    assert "no_grad" in result.message


def test_s3_success_reports_the_work_per_level():
    assert "n steps of work" in ex.S3(s3_fixed).message


def _s3_levels(x, n):
    ls = [x]
    for _ in range(n):
        ls.append(4 * ls[-1] * (1 - ls[-1]))
    return ls


def s3_forward_by_hand(x, n):
    """The same derivation carried forward (slope and value together): right too."""
    slope = np.ones_like(x)
    for _ in range(n):
        slope, x = slope * 4 * (1 - 2 * x), 4 * x * (1 - x)
    return slope


def s3_by_engine(x, n):
    t = ag.tensor(x, requires_grad=True)
    l = t
    for _ in range(n):
        l = 4 * l * (1 - l)
    l.sum().backward()
    return t.grad.numpy()


def s3_by_differences(x, n, h=1e-6):
    def level_n(v):
        for _ in range(n):
            v = 4 * v * (1 - v)
        return v
    return (level_n(x + h) - level_n(x - h)) / (2 * h)


def s3_depth_2_without_the_slip(x, n):
    return 16 * (1 - 2 * x) * (1 - 8 * x + 8 * x ** 2)


# (the learner's function, the diagnosis the check names): the item's named mistakes, each
# built independently of the check's mistake builders
S3_MISTAKES = [
    (lambda x, n: (4 * (1 - 2 * x)) ** n, "local_at_x"),
    (lambda x, n: np.prod([4 * (1 - 2 * v) for v in _s3_levels(x, n)[1:]], axis=0),
     "local_at_output"),
    (lambda x, n: np.sum([4 * (1 - 2 * v) for v in _s3_levels(x, n)[:-1]], axis=0),
     "sum_not_product"),
    (lambda x, n: np.prod([1 - 2 * v for v in _s3_levels(x, n)[:-1]], axis=0),
     "missing_factor"),
    (lambda x, n: np.prod([8 * v - 4 for v in _s3_levels(x, n)[:-1]], axis=0), "sign"),
    (lambda x, n: _s3_levels(x, n)[-1], "value"),
    (lambda x, n: s3_fixed(x, n + 1), "levels_off"),
    # one level short past depth 3 (at depth 3 that would be the depth-2 formula itself,
    # named "fixed_depth", and the check draws 3 or 5 first)
    (lambda x, n: s3_fixed(x, n - 1) if n > 3 else s3_fixed(x, n), "levels_off"),
    (s3_depth_2_without_the_slip, "fixed_depth"),
    (s3_by_engine, "uses_engine"),
    (s3_by_differences, "not_closed_form"),
]


@pytest.mark.parametrize("fn, diagnosis", S3_MISTAKES, ids=[d for _, d in S3_MISTAKES])
def test_s3_names_each_mistake_and_refuses_each_shortcut(fn, diagnosis):
    """S3 asks for the derivative worked out level by level; the snippet's idea (a formula
    for one depth), the engine doing it, a measured slope and each slip of the derivation
    fail with their own name."""
    result = ex.S3(fn)
    assert not result.ok and result.diagnosis == diagnosis, repr(result)
    assert status("S3") != "solved"


def test_s3_is_solved_carried_forward_or_swept_back():
    assert ex.S3(s3_forward_by_hand).ok
    assert ex.S3(s3_fixed).ok
    assert status("S3") == "solved"


def test_s3_a_table_of_depth_2_answers_fails_at_the_drawn_depths():
    """The depths after the lesson's are drawn when the check runs: right at depth 2 only is
    not right."""
    result = ex.S3(lambda x, n: s3_fixed(x, 2))
    assert not result.ok and "but not on" in result.message, repr(result)


def test_g12_experiment_names_every_silent_mistake():
    report = ex.G12.experiment()
    assert all(row[1] for row in report.rows), "each mistake passes a shape check"
    assert [row[2] for row in report.rows] == ["transpose", "wrong_activation_derivative",
                                               "missing_activation_derivative", "batch_factor"]


def test_s2_loss_curve_without_reset_stops_following_the_gradient():
    curves = ex.S2.experiment().data
    reset, never = curves["reset"], curves["never reset"]
    assert all(b < a for a, b in zip(reset, reset[1:])), "plain SGD descends"
    assert never[-1] > reset[-1]


def raises_inside(*args):
    x = args[0]
    return x.undefined_attribute


def returns_one(*args):
    return np.zeros(3)


@pytest.mark.parametrize("exercise_id, check", [(b[0], b[1]) for b in BUGS])
@pytest.mark.parametrize("given, code", [
    (None, "none"), (42, "type"), ("def grads(x, y): ...", "type"),
    (raises_inside, "raised"), (returns_one, None),
], ids=["None", "int", "source text", "raises", "wrong return"])
def test_anything_else_gets_a_sentence(exercise_id, check, given, code):
    result = ex.registry()[exercise_id].run(check, given)
    assert not result.ok
    if code == "type" and getattr(ex.registry()[exercise_id]._checks[check], "gradients", None):
        code = "call"  # the Gradients kind (G10's fix, G12): a form to fix, not a try
    if code:
        assert result.diagnosis == code
    assert "Traceback" not in repr(result)


def test_the_line_that_raised_is_named():
    result = ex.S5(raises_inside)
    assert "AttributeError" in result.message
    assert "x.undefined_attribute" in result.message


def test_learner_arrays_are_private_copies():
    seen = []

    def keeps(x, y):
        seen.append(x)
        x *= 0  # a learner's in-place edit must not reach the check's data
        return s1_fixed(np.asarray(x) + 0, y)

    ex.S1(keeps)
    assert ex.S1(s1_fixed).ok


@pytest.mark.parametrize("exercise_id", ["S1", "S2", "S4", "S6"])  # S3: a derivation, named
def test_a_placeholder_is_named_by_the_learners_own_function(exercise_id):
    """The learner's cell defines ``fixed_...``: the sentence names that function, not the
    snippet's, and never capitalises it into another name."""
    def fixed_version(*args):
        return None

    message = str(ex.registry()[exercise_id](fixed_version))
    assert "`fixed_version`" in message, message
    assert "Fixed_version" not in message


def s1_by_engine(x, y):
    xt, yt = ag.tensor(x, requires_grad=True), ag.tensor(y, requires_grad=True)
    ((xt + yt) * ag.tanh(xt)).sum().backward()
    return xt.grad.numpy(), yt.grad.numpy()


def g10_by_engine(ids, G, rows):
    W = ag.zeros(rows, G.shape[1], requires_grad=True)
    (W[ids] * ag.tensor(G)).sum().backward()
    return W.grad.numpy()


@pytest.mark.parametrize("exercise_id, check, by_engine", [
    ("S1", "fixed", s1_by_engine), ("G10", "fix", g10_by_engine)], ids=["S1", "G10 fix"])
def test_a_hand_sweep_handed_to_the_engine_is_refused(exercise_id, check, by_engine):
    """Issue #39: the fix of a hand-written sweep is the learner's NumPy; a function that
    lets the engine differentiate (right values) is told to write it by hand."""
    result = ex.registry()[exercise_id].run(check, by_engine)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)


def s1_by_differences(x, y, h=1e-6):
    """Central differences of L = sum((x + y) * tanh(x)): right to about 1e-10, no fix."""
    loss = lambda x, y: np.sum((x + y) * np.tanh(x))  # noqa: E731
    x_bar, y_bar = np.zeros_like(x), np.zeros_like(y)
    for i in range(len(x)):
        e = np.zeros_like(x)
        e[i] = h
        x_bar[i] = (loss(x + e, y) - loss(x - e, y)) / (2 * h)
        y_bar[i] = (loss(x, y + e) - loss(x, y - e)) / (2 * h)
    return x_bar, y_bar


def s5_by_engine(w, x, b, t):
    wt = ag.tensor(w, requires_grad=True)
    (0.5 * ((wt * ag.tensor(x) + ag.tensor(b) - ag.tensor(t)) ** 2).sum()).backward()
    return wt.grad.numpy()


def test_a_measured_slope_is_no_fixed_sweep():
    """Issue #39's re-audit: S1 asks for the hand sweep fixed; finite differences of the
    loss give the same numbers to about 1e-10 and are now told apart."""
    result = ex.S1(s1_by_differences)
    assert not result.ok and result.diagnosis == "not_closed_form", repr(result)
    assert ex.S1(s1_fixed).ok


def test_s5_refuses_the_engines_backward():
    result = ex.S5(s5_by_engine)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)


def test_s3_refuses_the_formula_expanded_by_sympy():
    """Issue #39's third audit: ``lambdify(symbolic.derivative(n, "logistic"))`` passed S3,
    the very approach (expand, then differentiate the formula) the item is about."""
    import sympy as sp

    from widgets.lessons import symbolic

    x = sp.Symbol("x")

    def derivative(at, n):
        return sp.lambdify(x, symbolic.derivative(n, "logistic"))(at)

    result = ex.S3(derivative)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)
    assert "sympy" in result.message


def test_a_derivative_that_uses_sympy_is_refused_where_the_work_is_by_hand():
    """D1's second derivative of tanh asked of sympy inside the function is refused as
    engine use is: another library worked the derivative out."""
    import sympy as sp

    x = sp.Symbol("x")

    def d2_tanh(at):
        return sp.lambdify(x, sp.diff(sp.tanh(x), x, 2))(at)

    result = ex.D1(d2_tanh)
    assert not result.ok and result.diagnosis == "uses_engine" and "sympy" in result.message


def test_a_formula_sympy_derived_beforehand_is_sympys_too():
    """The fourth audit: sympy run outside the check, its ``lambdify`` called inside: the
    generated function is sympy's derivation, written as NumPy code."""
    import sympy as sp

    x = sp.Symbol("x")
    d2_tanh = sp.lambdify(x, sp.diff(sp.tanh(x), x, 2), "numpy")
    result = ex.D1(d2_tanh)
    assert not result.ok and result.diagnosis == "uses_engine" and "sympy" in result.message


# -- data noted by a spy, answered from a table: the fixes run on data drawn at check time ---


def _spy_then_table(exercise, fixed, engine):
    """The audit's route: a first call notes the arguments the check passes, then the
    engine's answers on them (worked out outside the check) are handed back as a table."""
    noted = []

    def spy(*args):
        noted.append([a.copy() if isinstance(a, np.ndarray) else a for a in args])
        return fixed(*args)

    assert exercise(spy).ok  # a right function: the spy noted every call's data
    table = [(args, engine(*args)) for args in noted]

    def from_the_table(*args):
        for known, answer in table:
            if all(np.array_equal(a, b) for a, b in zip(known, args)
                   if isinstance(a, np.ndarray)):
                return answer
        return fixed(*noted[0])
    return from_the_table


def _s1_by_engine(x, y):
    xt, yt = ag.tensor(x, requires_grad=True), ag.tensor(y, requires_grad=True)
    ((xt + yt) * ag.tanh(xt)).sum().backward()
    return xt.grad.numpy(), yt.grad.numpy()


def _s5_by_engine(w, x, b, t):
    wt = ag.tensor(w, requires_grad=True)
    (0.5 * ((wt * ag.tensor(x) + ag.tensor(b) - ag.tensor(t)) ** 2).sum()).backward()
    return wt.grad.numpy()


@pytest.mark.parametrize("item, fixed, engine", [
    ("S1", s1_fixed, _s1_by_engine), ("S5", s5_fixed, _s5_by_engine)])
def test_a_table_of_the_engines_answers_on_noted_data_is_not_a_fix(item, fixed, engine):
    exercise = getattr(ex, item)
    table = _spy_then_table(exercise, fixed, engine)
    result = exercise(table)
    assert not result.ok and result.diagnosis == "not_from_problem", result.message
    assert "drawn at check time" in result.message
    assert exercise(fixed).ok  # the same check: a fix computed from its arguments passes


def test_s2s_fix_is_run_on_steps_drawn_at_check_time_too():
    """S2's first call's steps, noted: the same gradients handed back on later calls are
    right on the snippet's data only."""
    noted = []

    def spy(w, steps, micro):
        out = s2_fixed(w, steps, micro)
        noted.append([np.array(g) for g in out])
        return out

    assert ex.S2(spy).ok
    calls = iter(noted * 3)

    def replay(w, steps, micro):
        s2_fixed(w, steps, micro)  # the sweeps the check watches, on whatever data
        return next(calls)

    result = ex.S2(replay)
    assert not result.ok and result.diagnosis == "not_from_problem", result.message
