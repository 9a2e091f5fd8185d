"""The capstone's tasks (lesson 12): C1, a checkpoint plan within a byte budget, and C2, a
planted gradient bug found with the debugging tools and fixed with a backward the learner
derives.

C1 is measured with the engine (peak bytes held for backward, recomputed multiply-adds,
every gradient bit for bit); its feedback talks about the learner's plan and never names
one that fits. C2's bug is one the forward pass cannot show; the tests check that the
intended tool (forward pre-hooks to catch each module's input, then ``gradcheck`` module
by module) points at the buggy module, that the check names wrong places without saying
where the bug is, and that the fix is the learner's derivation: each slip of it and each
shortcut (the engine, finite differences, the lesson's β built in) is named.
"""

import warnings

import numpy as np
import pytest
from solutions import solution_text

import autograd_core as ag
from autograd_core.autograd import detect_anomaly, gradcheck
from autograd_core.nn import functional as F
from autograd_core.tools.instrument import instrument
from autograd_core.utils.checkpoint import checkpoint
from widgets import exercises as ex
from widgets.exercises import capstone_tasks as tasks
from widgets.exercises import store
from widgets.exercises.capstone_tasks import planted_bug
from widgets.exercises.tracking import status
from widgets.feedback.result import MAX_MESSAGE


@pytest.fixture(autouse=True)
def fresh_progress(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))


def messages(result) -> list[str]:
    """Every sentence a result shows: its own, its parts', and its hints."""
    texts = [result.message, result._hint]
    for part in result.parts:
        texts += [part.message, part._hint]
    return [t for t in texts if t]


# Plans within both limits (measured: a peak of 612,096 or 606,336 bytes, 14–15% extra work).
FITTING = ([[0, 1, 2]], [[0, 1, 2, 3]], [[0, 1, 2], [7, 8]])
# Ways a message could give a fitting plan away.
GIVEAWAYS = ("[[0, 1, 2", "[0, 1, 2]", "modules 0–2", "modules 0–3", "0, 1, 2, 3")


# -- C1: a checkpoint plan -------------------------------------------------------------------


@pytest.mark.parametrize("plan", FITTING)
def test_a_plan_within_both_limits_passes(plan):
    result = ex.C1(plan)
    assert result.ok, result
    assert [p.name for p in result.parts] == ["memory", "recompute", "gradients"]
    assert "bit for bit" in result.parts[2].message
    assert status("C1") == "solved"


def test_a_forward_of_your_own_is_measured_the_same_way():
    def forward(model, x):
        return model[3:](checkpoint(model[0:3], x))

    assert ex.C1(forward).ok
    assert tasks.PlanTask().measure(forward).peak == tasks.PlanTask().measure([[0, 1, 2]]).peak


def test_the_problem_measures_what_the_check_measures():
    task = ex.C1.problem()
    run = task.measure([[0, 1, 2]])
    assert run.peak <= task.budget < task.plain.peak
    assert run.extra_forward_work <= task.max_extra_work
    assert run.same_gradients() and run.step.recomputed == ("0", "1", "2")
    assert "640,000" in repr(task) and "re-ran modules 0–2" in repr(run)


def test_over_budget_says_by_how_much_and_when_the_peak_comes():
    result = ex.C1([[0, 1]])
    memory, work, gradients = result.parts
    assert not result.ok and not memory.ok and work.ok and gradients.ok
    assert memory.diagnosis == "over_budget"
    assert "677,632" in memory.message and "37,632 over the budget of 640,000" in memory.message
    assert "end of the forward pass" in memory.message


def test_a_peak_during_backward_is_named():
    memory = ex.C1([[4]]).parts[0]
    assert memory.diagnosis == "over_budget" and "during backward" in memory.message


def test_a_plan_that_keeps_more_than_no_plan_is_explained():
    memory = ex.C1([[5]]).parts[0]
    assert "more than the plain run's 1,202,048" in memory.message
    assert "1-byte mask" in memory.message


def test_too_much_recomputation_names_the_costly_module_of_your_plan():
    result = ex.C1([[0, 1, 2], [4]])
    memory, work, _ = result.parts
    assert memory.ok and not work.ok and work.diagnosis == "too_much_work"
    assert "Module 4 (ResidualBlock)" in work.message and "re-runs it" in work.message


@pytest.mark.parametrize("plan", [[], (), [[7, 8]], [[5]], [[0, 1]], [[4]], [[1, 2]],
                                  [[0, 1, 2], [4]], [[3, 4, 5, 6, 7, 8]]])
def test_wrong_plans_never_name_a_plan_that_fits(plan):
    result = ex.C1(plan)
    assert not result.ok
    for text in messages(result):
        assert not any(g in text for g in GIVEAWAYS), text


@pytest.mark.parametrize("plan", [[], ()])
def test_a_plan_that_checkpoints_nothing(plan):
    result = ex.C1(plan)
    assert result.diagnosis == "no_checkpoint" and "checkpoints nothing" in result.message


@pytest.mark.parametrize("plan, words", [
    ([0, 1, 2], "flat list of numbers"),
    ("0-3", "Your plan is a str"),
    (3, "Your plan is an int"),
    ({0: 1}, "Your plan is a dict"),
    ([[0, 2]], "skips modules"),
    ([[0, 1], [1, 2]], "overlap"),
    ([[3, 4], [0, 1]], "out of order"),
    ([[9]], "numbered 0 to 8"),
    ([[-1]], "numbered 0 to 8"),
    ([[0.5]], "not a module index"),
    ([[True]], "not a module index"),
    ([[None]], "not a module index"),
    ([[]], "is empty"),
    ([[0], "1"], "Group 2 of your plan is a str"),
    ([[0]] * 20, "only 9 modules"),
    (np.array([[0, 1]]), "Your plan is a NumPy array"),
])
def test_malformed_plans_get_a_sentence(plan, words):
    result = ex.C1(plan)
    assert not result.ok and result.diagnosis == "format"
    assert words in result.message and len(result.message) <= MAX_MESSAGE
    assert status("C1") == "in progress"


def test_the_placeholder_is_not_an_attempt():
    result = ex.C1(None)
    assert not result.ok and result.diagnosis == "none" and "placeholder" in result.message
    assert status("C1") == "not started"


def _closure(model, x):
    h = checkpoint(lambda t: model[1](model[0](t)), x)  # the modules' parameters are not inputs
    for module in list(model)[2:]:
        h = module(h)
    return h


def _doubled(model, x):
    h = model[0:3](x)
    h = h.detach() + (h - h.detach()) * 2   # same values, twice the gradient
    return model[4:](checkpoint(model[3:4], h))


def _eval_mode(model, x):
    model[1].eval()
    return model[3:](checkpoint(model[0:3], x))


@pytest.mark.parametrize("forward, diagnosis, words", [
    (_closure, "no_gradient", "No gradient reached the parameters of modules 0–1"),
    (_doubled, "gradients_differ", "gradients of modules 0–1 differ"),
    (_eval_mode, "forward_values", "training mode"),
    (lambda model, x: checkpoint(model[0:3], x), "shape", "returned shape (64, 16, 8, 8)"),
    (lambda model, x: None, "type", "returned a NoneType"),
    (lambda model, x: undefined_name, "raised", "NameError"),  # noqa: F821
    (lambda model: model, "raised", "TypeError"),
])
def test_a_forward_of_your_own_gets_its_mistake_named(forward, diagnosis, words):
    result = ex.C1(forward)
    found = [result] + list(result.parts)
    named = next(r for r in found if r.diagnosis == diagnosis)
    assert not result.ok and words in named.message, named.message
    assert all(len(r.message) <= MAX_MESSAGE for r in found)


# -- C2: a bug hunt --------------------------------------------------------------------------


def module_inputs(model, x):
    """What each module receives in one forward pass (lesson 12's forward pre-hooks)."""
    seen = {}

    def keep(name):
        def hook(module, args):
            seen[name] = args[0].detach()
        return hook

    handles = [m.register_forward_pre_hook(keep(name)) for name, m in model.named_modules()]
    with ag.no_grad():
        model(x)
    for handle in handles:
        handle.remove()
    return seen


def passes(module, x) -> bool:
    return gradcheck(module, (ag.tensor(x.numpy(), requires_grad=True),), raise_exception=False)


def test_the_forward_tools_see_nothing_wrong():
    p = ex.C2.problem()
    assert instrument(p.model, p.x).first_nonfinite is None
    with detect_anomaly():
        F.cross_entropy(p.model(p.x), p.y).backward()   # no error: nothing non-finite
    assert np.isfinite(p.x.numpy()).all()


def test_gradient_checks_module_by_module_point_at_the_buggy_module():
    """The hunt as lesson 12 teaches it: the top level first, then into what fails."""
    p = ex.C2.problem()
    modules = dict(p.model.named_modules())
    inputs = module_inputs(p.model, p.x)
    x = ag.tensor(p.x.numpy(), requires_grad=True)
    assert not gradcheck(lambda t: F.cross_entropy(p.model(t), p.y), (x,), raise_exception=False)
    failing, frontier = [], [n for n in modules if n and "." not in n]
    while frontier:
        name = frontier.pop(0)
        if not passes(modules[name], inputs[name]):
            failing.append(name)
            frontier += [f"{name}.{c}" for c, _ in modules[name].named_children()]
    assert failing == ["5", "5.body", "5.body.act"]
    innermost = [n for n in failing if not any(o.startswith(n + ".") for o in failing)]
    assert innermost == ["5.body.act"]
    assert passes(modules["2"], inputs["2"])   # the same hand-written op, with beta = 1


def test_the_reference_is_right_and_the_bug_changes_gradients_only():
    good, buggy = planted_bug._reference_model(), tasks.bug_hunt_model()
    p = ex.C2.problem()
    x = ag.tensor(p.x.numpy(), requires_grad=True)
    assert gradcheck(lambda t: F.cross_entropy(good(t), p.y), (x,), raise_exception=False)
    with ag.no_grad():
        np.testing.assert_array_equal(good(p.x).numpy(), buggy(p.x).numpy())


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def right_backward(x, beta, g):
    """d(x · σ(βx))/dx times g, derived independently: s + x · β s (1 − s)."""
    s = _sigmoid(beta * x)
    return g * (s + beta * x * s * (1 - s))


def test_the_right_place_and_fix_pass():
    result = ex.C2(module="5.body.act", backward=right_backward)
    assert result.ok, result
    assert [p.name for p in result.parts] == ["module", "fix"]
    assert status("C2") == "solved"


def test_a_right_backward_at_a_coarse_place_is_half_right():
    result = ex.C2(module="5", backward=right_backward)
    module, fix = result.parts
    assert fix.ok and not module.ok and module.diagnosis == "too_coarse"
    assert status("C2") == "in progress"


def test_the_derived_backward_repairs_the_model():
    """Put into the module found, the learner's backward makes the whole model pass a
    gradient check; the planted one's does not, and the forward values never change."""
    p = ex.C2.problem()
    x = ag.tensor(p.x.numpy(), requires_grad=True)

    def check(model):
        return gradcheck(lambda t: F.cross_entropy(model(t), p.y), (x,), raise_exception=False)

    def planted(x, beta, g):
        s = _sigmoid(beta * x)
        return g * (s + x * s * (1 - s))

    repaired = planted_bug.with_backward(ex.C2.problem().model, "5.body.act", right_backward)
    assert check(repaired)
    assert not check(planted_bug.with_backward(ex.C2.problem().model, "5.body.act", planted))
    with ag.no_grad():
        np.testing.assert_array_equal(repaired(p.x).numpy(), p.model(p.x).numpy())
    with pytest.raises(TypeError, match="replaces a Swish's backward"):
        planted_bug.with_backward(ex.C2.problem().model, "5.body.conv1", right_backward)
    assert status("C2") == "not started"   # a measurement of the learner's own backward


@pytest.mark.parametrize("module, diagnosis, words", [
    ("2", "passes", "Module '2' (Swish) passes a gradient check"),
    ("4.body.relu", "passes", "(ReLU) passes"),
    ("4", "passes", "(ResidualBlock) passes"),
    ("5.body.conv2", "passes", "passes a gradient check"),
    ("5.body", "too_coarse", "go one level down"),
    ("5", "too_coarse", "go one level down"),
    (5, "too_coarse", "Module '5'"),
    ("", "whole_model", "the whole model"),
    ("5.body.actt", "unknown_module", "no module '5.body.actt'"),  # a typo of the answer
    ("5.shortcut", "unknown_module", "no module '5.shortcut'"),  # the old bug's place
    ("layer 5", "unknown_module", "no module 'layer 5'"),
])
def test_wrong_places_are_named_without_saying_where_the_bug_is(module, diagnosis, words):
    part = ex.C2(module=module).parts[0]
    assert not part.ok and part.diagnosis == diagnosis and words in part.message
    said = part.message.replace(f"{module!r}", "")  # the learner's own words, quoted back
    assert "5.body.act" not in said and "beta" not in said and "β" not in said


def _by_engine(x, beta, g):
    t = ag.tensor(x, requires_grad=True)
    (t * (beta * t).sigmoid()).backward(ag.tensor(g))
    return t.grad.numpy()


def _by_differences(x, beta, g, h=1e-6):
    def f(v):
        return v * _sigmoid(beta * v)
    return g * (f(x + h) - f(x - h)) / (2 * h)


def _derivative_of(beta_term, sigmoid_of_x=False, upstream=True, first_term=True,
                   outer=lambda b: 1):
    """A backward of x · σ(βx) built from its parts, for the named slips below."""
    def backward(x, beta, g):
        s = _sigmoid(x if sigmoid_of_x else beta * x)
        d = (s if first_term else 0) + beta_term(beta) * x * s * (1 - s)
        return (g if upstream else 1) * outer(beta) * d
    return backward


# (the learner's backward, the diagnosis the check names): C2's named slips and shortcuts
WRONG_BACKWARDS = [
    (_derivative_of(lambda b: 1), "still_buggy"),                      # the planted bug
    (_derivative_of(lambda b: 1, outer=lambda b: b), "inner_factor_on_both"),
    (_derivative_of(lambda b: b * b), "inner_factor_twice"),
    (_derivative_of(lambda b: b, sigmoid_of_x=True), "sigmoid_of_x"),
    (_derivative_of(lambda b: b, first_term=False), "missing_product_term"),
    (_derivative_of(lambda b: 0), "sigmoid_constant"),
    (_derivative_of(lambda b: b, upstream=False), "missing_upstream"),
    (lambda x, beta, g: x * _sigmoid(beta * x), "value"),
    (lambda x, beta, g: right_backward(x, 2.0, g), "fixed_beta"),        # the lesson's β
    (_by_engine, "uses_engine"),
    (lambda x, beta, g: planted_bug.SwishOp.apply(ag.tensor(x), beta=beta).numpy(),
     "uses_engine"),
    (_by_differences, "not_closed_form"),
    (lambda x, beta, g: None, "none"),
    ("return x", "type"),
    (lambda x: x, "raised"),
]


@pytest.mark.parametrize("backward, diagnosis", WRONG_BACKWARDS,
                         ids=[f"{i}-{d}" for i, (_, d) in enumerate(WRONG_BACKWARDS)])
def test_wrong_backwards_and_shortcuts_are_named(backward, diagnosis):
    fix = ex.C2(module="5.body.act", backward=backward).parts[1]
    assert not fix.ok and fix.diagnosis == diagnosis, fix.message
    assert status("C2") != "solved"


def test_the_fix_is_tried_on_shapes_and_betas_drawn_at_check_time():
    """A table of the engine's answers on the lesson's arrays (noted at an earlier check)
    is right there only."""
    table = []

    def spy(x, beta, g):
        table.append((x.copy(), beta, planted_bug._engine_swish_grad(x, beta, g)))

    ex.C2(module="5.body.act", backward=spy)
    lesson_x, _, lesson_answer = table[0]

    def tabled(x, beta, g):
        return lesson_answer if np.array_equal(x, lesson_x) else np.zeros_like(x)

    fix = ex.C2(module="5.body.act", backward=tabled).parts[1]
    assert not fix.ok and "but not on" in fix.message, fix.message


def test_the_old_answer_a_forward_is_told_what_c2_takes():
    result = ex.C2(module="5.body.act", forward=lambda m, x: x * (m.beta * x).sigmoid())
    assert not result.ok and "backward" in result.message


def test_placeholders_leave_a_fresh_start():
    result = ex.C2()
    assert not result.ok and {p.diagnosis for p in result.parts} == {"none"}
    assert status("C2") == "not started"


class Weird:
    def __repr__(self):
        return "W" * 10_000


@pytest.mark.parametrize("value", [
    ["5"], {"module": "5"}, 5.5, np.arange(3), "x" * 5000, Weird(), b"5", float("nan"), True,
])
def test_malformed_inputs_get_short_sentences(value):
    for kwargs in ({"module": value}, {"module": "5.body.act", "backward": value},
                   {"module": value, "backward": value}):
        result = ex.C2(**kwargs)
        assert not result.ok
        assert all(len(m) <= MAX_MESSAGE for m in messages(result))
    result = ex.C1(value)
    assert not result.ok and len(result.message) <= MAX_MESSAGE


def test_a_module_object_instead_of_its_path():
    p = ex.C2.problem()
    part = ex.C2(module=p.model[5]).parts[0]
    assert part.diagnosis == "type" and "not the Residual module itself" in part.message


def test_the_snippet_is_the_code_that_runs():
    import ast

    ast.parse(ex.C2.snippet)
    assert "class SwishOp" in ex.C2.snippet and "beta=2.0" in ex.C2.snippet
    assert "x.data" not in ex.C2.snippet and "detach" not in ex.C2.snippet


def test_the_solutions_solve_the_tasks():
    """What the stepped help ends with is right (read without recording a reveal)."""
    c1, c2 = solution_text(ex.C1), solution_text(ex.C2)
    assert "[[0, 1, 2]]" in c1 and "612,096" in c1
    assert ex.C1([[0, 1, 2]]).ok and ex.C1([[0, 1, 2, 3]]).ok
    assert "module='5.body.act'" in c2 and "return g * (s + beta * x * s * (1 - s))" in c2
    assert ex.C1.hint and ex.C1.skeleton and ex.C2.skeleton


# -- search is not thought -----------------------------------------------------------------


def test_a_search_over_every_one_group_plan_counts_as_seeing_the_solution():
    """45 measurements, one per group of consecutive modules, then the plan that fits:
    past C1's tries, the plan was found by search."""
    task = ex.C1.problem()
    for i in range(9):
        for j in range(i, 9):
            task.measure([list(range(i, j + 1))])
    result = ex.C1(FITTING[0])
    assert result.ok and "counts as solved after seeing the solution" in result.message
    assert status("C1") == "solved after seeing the solution"


def test_a_few_measurements_then_a_fitting_plan_is_solved():
    task = ex.C1.problem()
    for plan in ([[7, 8]], [[0, 1]], [[0, 1, 2, 3, 4]]):
        task.measure(plan)
    assert ex.C1([[0, 1]]).ok is False
    assert ex.C1(FITTING[0]).ok and status("C1") == "solved"


def test_asking_c2_about_every_module_counts_as_seeing_the_solution():
    p = ex.C2.problem()
    for path, _ in p.model.named_modules():
        ex.C2(module=path, backward=right_backward)
    assert status("C2") in ("solved after seeing the solution", "in progress")
    assert status("C2") != "solved"


def test_probing_modules_without_a_fix_spends_tries():
    """Issue #39's re-audit: C2(module=...) alone graded the module part and counted no
    try, so asking about each of the 24 paths found the bug for free. A part answered
    wrong is a try, beside a placeholder too."""
    from widgets.exercises.tracking import TRIES, status

    for path in ["0", "1", "2", "3", "4", "5", "6"]:
        assert not ex.C2(module=path).ok
    assert store.read_item("C2")["misses"].get(TRIES) == 7
    assert ex.C2(module="5.body.act", backward=right_backward).ok
    assert status("C2") == "solved after seeing the solution"


# -- what a measurement answers is read from what the engine ran -----------------------------


def _batch():
    g = np.random.default_rng(11)
    x = ag.tensor(g.random((64, 1, 8, 8)))
    y = ag.tensor(g.integers(0, 10, 64))
    return x, (lambda out: F.cross_entropy(out, y))


def _tries(item="C1") -> int:
    return store.read_item(item)["misses"].get("tries:", 0)


def test_a_plan_attribute_set_by_hand_hides_no_search():
    """The audit's route: every one-group plan measured through a forward that claims to be
    the lesson's example plan. What the engine re-ran says otherwise: each is a try."""
    from widgets.lessons.checkpointing import measure_step, plan_forward
    from widgets.lessons.digits import make_cnn

    x, loss = _batch()
    for i in range(9):
        for j in range(i, 9):
            fwd = plan_forward([list(range(i, j + 1))])
            fwd.plan = [[7, 8]]
            measure_step(make_cnn(generator=ag.Generator(0), dtype=ag.float64), x, loss=loss,
                         forward=fwd)
    assert _tries() == 44  # all but [[7, 8]] itself, whose measurement the lesson shows
    result = ex.C1(FITTING[0])
    assert result.ok and status("C1") == "solved after seeing the solution"


class _PassOn(ag.nn.Module):
    def forward(self, x):
        return x


class _Renamed(ag.nn.Sequential):
    """The capstone's layers under another name, one level down, with a module more."""


@pytest.mark.parametrize("build", [
    lambda cnn: ag.nn.Sequential(*cnn, _PassOn()),           # a module appended
    lambda cnn: _Renamed(_PassOn(), ag.nn.Sequential(*cnn)),   # renamed, one level down
])
def test_the_capstones_layers_are_found_in_any_model(build):
    from widgets.lessons.checkpointing import measure_step
    from widgets.lessons.digits import make_cnn

    x, loss = _batch()
    model = build(make_cnn(generator=ag.Generator(0), dtype=ag.float64))
    cnn = model[1] if isinstance(model, _Renamed) else model
    measure_step(model, x, loss=loss, forward=lambda m, t: cnn[3:](checkpoint(cnn[:3], t)))
    assert _tries() == 1


@pytest.mark.parametrize("forward", [
    lambda m, t: m[2:](checkpoint(lambda h: m[1](m[0](h)), t,  # written by hand
                                  parameters=list(m[:2].parameters()))),
    lambda m, t: m[2:](checkpoint(lambda h: m[1](m[0](h)), t)),  # modules 0-1 cut off
    lambda m, t: m[2:](m[:2](t).detach()),
])
def test_a_forward_of_your_own_counts_too(forward):
    """A plan placed by hand (float32 this time), or a step that drops part of the graph,
    which re-runs nothing: neither is a measurement the lesson shows."""
    from widgets.lessons.checkpointing import measure_step
    from widgets.lessons.digits import make_cnn

    x, loss = _batch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        measure_step(make_cnn(dtype=ag.float32), x, loss=loss, forward=forward)
    assert _tries() == 1


def test_lesson_12s_own_measurements_count_nothing():
    """The plain step, three even segments and the example plan, at the lesson's batch or
    another, placed by measure_step or by hand: all shown in the lesson."""
    from widgets.lessons.checkpointing import measure_step, plan_forward
    from widgets.lessons.digits import make_cnn

    x, loss = _batch()
    for segments in (1, 3):
        measure_step(make_cnn(generator=ag.Generator(0), dtype=ag.float64), x, segments,
                     loss=loss)
    measure_step(make_cnn(dtype=ag.float64), ag.tensor(x.numpy()[:8]),  # by hand, 8 images
                 loss=lambda out: out.sum(), forward=lambda m, t: checkpoint(m[7:9], m[:7](t)))
    measure_step(make_cnn(dtype=ag.float64), x, loss=loss, forward=plan_forward([[7, 8]]))
    ex.C1.problem().measure([[7, 8]])
    assert _tries() == 0 and store.read_item("C1")["solution_seen"] is None
    measure_step(make_cnn(dtype=ag.float64), x, 2, loss=loss)  # an even split it does not show
    assert _tries() == 1


def test_a_forward_handed_to_the_check_that_measures_is_counted_each_time():
    """The check runs the learner's forward twice, once inside its own quiet measurement:
    what that forward measures is still the learner's (two tries, and the check's own)."""
    from widgets.lessons.checkpointing import measure_step, plan_forward
    from widgets.lessons.digits import make_cnn

    x, loss = _batch()

    def forward(model, t):
        with ag.enable_grad():
            measure_step(make_cnn(dtype=ag.float64), x, loss=loss,
                         forward=plan_forward([[0, 1]]))
        return plan_forward([[0, 1, 2]])(model, t)

    assert not ex.C1(forward).ok  # its own measurement adds to the check's, too
    assert _tries() == 3
