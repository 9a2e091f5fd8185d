"""The widgets, driven headlessly: construct, click, set sliders, read the HTML.

Expected gradients are derived by hand in NumPy for the program below, never read
back from the engine; byte counts come from the NumPy arrays the ops keep.
"""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sample_programs import broadcast_mask_fanout as program

import autograd_core as ag
from autograd_core import nn
from autograd_core.ops.elementwise import Mul
from autograd_core.tools.graph import saved_bytes
from widgets import BackwardStepper, ForwardTracer, GraphView, MemoryView, draw, theme
from widgets.feedback.check import check_predicted_gradient
from widgets.highlight import STYLES
from widgets.summary import format_bytes, full

ROOT = Path(__file__).resolve().parents[2]


def by_hand(x, w, b):
    """The gradients of ``program`` written out with the chain rule."""
    X, W, B = x.numpy(), w.numpy(), b.numpy()
    z = X @ W + B
    h = np.maximum(z, 0)
    dh = 2 * h + 2 * (1 - np.tanh(h) ** 2)  # h*h and tanh(h)*2 both use h: summed
    dz = dh * (z > 0)
    return {"x": dz @ W.T, "w": X.T @ dz, "b": dz.sum(axis=0), "h": dh, "dz": dz}


def step_of(stepper, op_name, nth=0):
    """The step number (1-based) at which the sweep visits the nth op called op_name."""
    ops = {o.id: o.op for o in stepper.graph.ops}
    numbers = [s.number for s in stepper.replay.steps if ops.get(s.op) == op_name]
    return numbers[nth]


# -- the stepper: navigation and the learner's .grad ----------------------------------------
def test_after_last_the_leaves_hold_the_hand_derived_gradients():
    y, x, w, b = program()
    expected = by_hand(x, w, b)
    stepper = BackwardStepper(y)
    assert stepper.step == 0 and x.grad is None and w.grad is None and b.grad is None
    stepper.last()
    for name, t in (("x", x), ("w", w), ("b", b)):
        np.testing.assert_allclose(t.grad.numpy(), expected[name], rtol=1e-12)
    stepper.first()
    assert x.grad is None and w.grad is None and b.grad is None


def test_grad_fills_in_when_its_step_runs_and_stepping_back_restores_it_exactly():
    y, x, w, b = program()
    stepper = BackwardStepper(y)
    n = len(stepper.replay)
    add_bias = step_of(stepper, "add", nth=1)  # the later add (the bias) is visited second
    seen = []
    for k in range(n + 1):
        stepper.step = k
        seen.append({name: None if t.grad is None else t.grad.numpy().copy()
                     for name, t in (("x", x), ("w", w), ("b", b))})
        assert (seen[k]["b"] is None) == (k < add_bias)
        assert (seen[k]["x"] is None) == (k < n)
    np.testing.assert_allclose(seen[add_bias]["b"], by_hand(x, w, b)["b"], rtol=1e-12)
    for k in [n - 1, 2, add_bias, 0, n, add_bias - 1, 1]:  # back and forth, in jumps
        stepper.step = k
        for name, t in (("x", x), ("w", w), ("b", b)):
            if seen[k][name] is None:
                assert t.grad is None
            else:
                assert np.array_equal(t.grad.numpy(), seen[k][name])


def test_an_existing_grad_is_the_starting_point_and_accumulates():
    y, x, w, b = program()
    x.grad = ag.tensor(np.ones((4, 3)))
    stepper = BackwardStepper(y)
    assert np.array_equal(x.grad.numpy(), np.ones((4, 3)))
    stepper.last()
    np.testing.assert_allclose(x.grad.numpy(), 1 + by_hand(x, w, b)["x"], rtol=1e-12)


@pytest.mark.parametrize("clicks, expected", [
    (["next"], 1), (["next", "next", "previous"], 1), (["last"], "n"), (["last", "first"], 0),
    (["previous"], 0), (["last", "next"], "n"), (["next", "last", "previous"], "n-1"),
])
def test_buttons_move_the_step(clicks, expected):
    stepper = BackwardStepper(program()[0])
    n = len(stepper.replay)
    for name in clicks:
        getattr(stepper.controls, f"{name}_button").click()
    assert stepper.step == {"n": n, "n-1": n - 1}.get(expected, expected)
    assert stepper.controls.slider.value == stepper.step


def test_slider_play_and_buttons_stay_in_step():
    stepper = BackwardStepper(program()[0])
    n = len(stepper.replay)
    stepper.controls.slider.value = 3
    assert stepper.step == 3 and stepper.controls.play.value == 3
    stepper.controls.play.value = 5
    assert stepper.step == 5 and stepper.controls.slider.value == 5
    assert stepper.controls.label.value == f"5 / {n}"
    stepper.first()
    assert stepper.controls.previous_button.disabled and not stepper.controls.next_button.disabled
    stepper.last()
    assert stepper.controls.next_button.disabled and stepper.controls.play.max == n


def test_a_step_out_of_range_says_the_range():
    stepper = BackwardStepper(program()[0])
    with pytest.raises(IndexError, match=rf"0 \(before the first node\) to {len(stepper.replay)}"):
        stepper.step = 99


def test_the_sweep_ran_once_so_a_second_backward_fails_like_after_backward():
    y = program()[0]
    BackwardStepper(y)
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


# -- what a step shows ----------------------------------------------------------------------
def test_each_step_shows_upstream_rule_reads_sends_and_releases():
    y, x, w, b = program()
    stepper = BackwardStepper(y)
    stepper.step = step_of(stepper, "mul", nth=1)  # h * h: visited after tanh(h) * 2
    text = stepper.step_html.value
    assert f"of {len(stepper.replay)}" in text and "upstream gradient" in text
    for line in Mul.rule.splitlines():
        assert line in text  # the rule from the op's own definition
    assert "reads saved tensors" in text and "released: b" in text


def test_fan_out_shows_each_contribution_and_the_running_sum():
    y, x, w, b = program()
    stepper = BackwardStepper(y)
    k = step_of(stepper, "mul", nth=1)  # h * h: h's second and third contributions
    stepper.step = k
    record = stepper.replay.step(k)
    assert [s.accumulated for s in record.sent] == [True, True]
    np.testing.assert_allclose(record.sent[-1].total, by_hand(x, w, b)["h"], rtol=1e-12)
    text = stepper.step_html.value
    assert "accumulated" in text and "running sum" in text
    assert text.count("from op") >= 2  # the earlier contributions, with where they came from


def test_the_bias_step_shows_the_un_broadcast():
    y, x, w, b = program()
    stepper = BackwardStepper(y)
    stepper.step = step_of(stepper, "add", nth=1)
    text = stepper.step_html.value
    assert "un-broadcast" in text and "(4, 2)" in text and "summed over axis 0" in text
    assert "(2,)" in text


def test_relu_releases_its_mask_with_its_size():
    stepper = BackwardStepper(program()[0])
    stepper.step = step_of(stepper, "relu")
    assert f"released: mask ({format_bytes(4 * 2)})" in stepper.step_html.value  # bool (4, 2)


def test_step_zero_shows_the_seed_and_retain_graph_releases_nothing():
    y = program()[0]
    stepper = BackwardStepper(y, retain_graph=True)
    assert "seed gradient" in stepper.step_html.value
    stepper.step = step_of(stepper, "relu")
    assert "released nothing (retain_graph=True" in stepper.step_html.value
    y.backward()  # the graph was kept


def test_leaves_panel_lists_every_leaf_and_marks_the_ones_this_step_changed():
    y, x, w, b = program()
    stepper = BackwardStepper(y)
    stepper.last()
    panel = stepper.leaves_html.value
    for name in ("'x'", "'w'", "'b'"):
        assert name.replace("'", "&#x27;") in panel
    assert panel.count(theme.HAS_GRAD_FILL) == 2  # the last step (matmul) fills x and w


def style_of(view):
    """{declarations: [ids]} of a view's style block; every selector is scoped to it."""
    scopes, rules = set(), {}
    for line in view.picture.css.splitlines():
        m = re.fullmatch(r"#(\w+) :is\(([^)]*)\)(\S*?)\{(.*)\}", line)
        assert m, line
        scopes.add(m[1])
        rules.setdefault(m[4], []).extend(i.lstrip("#") for i in m[2].split(","))
    assert scopes == {view.picture.container_id}
    return rules


def test_the_style_block_highlights_the_current_op_and_what_it_reads():
    y = program()[0]
    stepper = BackwardStepper(y)
    assert stepper.picture.container_id and stepper.picture.svg == stepper.svg
    current, read = STYLES["current"][1], STYLES["read"][1]
    assert style_of(stepper).get(STYLES["upstream"][1]) == [
        stepper.graph.output]
    for k in range(1, len(stepper.replay) + 1):
        stepper.step = k
        record = stepper.replay.step(k)
        rules = style_of(stepper)
        assert rules[current] == [record.op]
        assert rules.get(read, []) == list(record.read_nodes)
        for node in rules.get(read, []):
            assert f'<g id="{node}" class="node' in stepper.svg  # a node of the picture


def test_a_step_changes_the_style_only_not_the_picture():
    stepper = BackwardStepper(program()[0])
    picture = stepper.picture.svg
    styles = set()
    for k in range(len(stepper.replay) + 1):
        stepper.step = k
        styles.add(stepper.picture.css)
        assert stepper.picture.svg is picture
    assert len(styles) == len(stepper.replay) + 1


def test_a_step_keeps_the_current_op_in_view():
    stepper = BackwardStepper(program()[0])
    assert stepper.picture.focus == stepper.graph.output  # step 0: the output
    for k in range(1, len(stepper.replay) + 1):
        stepper.step = k
        assert stepper.picture.focus == stepper.replay.step(k).op


def test_the_step_keys_move_the_stepper_and_toggle_predict_mode():
    stepper = BackwardStepper(program()[0])
    press = stepper.picture._key_callbacks[0]
    press("ArrowRight"), press("ArrowRight")
    assert stepper.step == 2
    press("ArrowLeft")
    assert stepper.step == 1
    press("End")
    assert stepper.step == len(stepper.replay)
    press("Home")
    assert stepper.step == 0
    press("p")
    assert stepper.predict_mode
    press("p")
    assert not stepper.predict_mode


def test_clicking_a_node_shows_it_in_the_inspector_and_follows_the_step():
    y, x, *_ = program()
    stepper = BackwardStepper(y)
    leaf = stepper.graph.id_of(x)
    stepper.picture.selected = leaf
    assert "nothing yet" in stepper.picture.detail
    stepper.last()
    assert full(x.grad.numpy()) in stepper.picture.detail


# -- predict mode ---------------------------------------------------------------------------
def at_matmul(predict=True):
    y, x, w, b = program()
    stepper = BackwardStepper(y, predict=predict)
    stepper.step = step_of(stepper, "matmul")
    return stepper, by_hand(x, w, b)


def test_predict_mode_hides_the_sent_gradient_until_it_is_predicted():
    stepper, hand = at_matmul()
    assert not stepper.revealed and "<b>?</b>" in stepper.step_html.value
    assert stepper.predict_box.layout.display != "none"
    ok, message = stepper.predict(hand["x"], input="a")
    assert ok and message.startswith("Correct") and not stepper.revealed  # w is still hidden
    ok, _ = stepper.predict(hand["w"], input="b")
    assert ok and stepper.revealed and "<b>?</b>" not in stepper.step_html.value
    assert "✔" in stepper.feedback.value


@pytest.mark.parametrize("mistake, phrase", [
    (lambda g: -g, "wrong sign"),
    (lambda g: 4 * g, "off by the same constant factor (too large)"),  # not "4 times"
    (lambda g: g / 2, "2 times too small"),
    (lambda g: g.T, "transpose"),
    (lambda g: g[:2], "shape (2, 3), but the shape of the engine's gradient is (4, 3)"),
    (lambda g: g.sum(), "is a single number"),
    (lambda g: g + np.eye(4, 3), "differs from the engine's gradient in 3 of 12 entries"),
])
def test_wrong_predictions_are_named(mistake, phrase):
    stepper, hand = at_matmul()
    ok, message = stepper.predict(mistake(hand["x"]), input="a")
    assert not ok and phrase in message
    assert "✘" in stepper.feedback.value and not stepper.revealed


def test_the_input_picker_shows_the_first_input_of_each_step():
    stepper, _ = at_matmul()
    assert stepper.input_picker.index == 0 and stepper.input_picker.label.startswith("a")
    stepper.previous()
    assert stepper.input_picker.index == (0 if stepper.input_picker.options else None)
    assert stepper.answer.style.description_width == "initial"


def test_a_typed_answer_is_parsed_safely_and_checked():
    stepper, hand = at_matmul()
    stepper.input_picker.value = 1  # the gradient sent to w
    stepper.answer.value = repr(hand["w"].tolist())
    assert "✔" in stepper.feedback.value
    stepper.answer.value = "__import__('os').system('echo unsafe')"
    stepper.check_button.click()
    assert "Could not read" in stepper.feedback.value


def test_predicting_the_broadcast_shape_is_explained():
    y, x, w, b = program()
    stepper = BackwardStepper(y, predict=True)
    stepper.step = step_of(stepper, "add", nth=1)
    ok, message = stepper.predict(by_hand(x, w, b)["dz"], input="b")  # (4, 2), not (2,)
    assert not ok and "the forward pass broadcast over" in message and "axis 0" in message


def test_reveal_and_leaving_predict_mode_show_the_gradients():
    stepper, _ = at_matmul()
    stepper.reveal()
    assert stepper.revealed and "<b>?</b>" not in stepper.step_html.value
    stepper.previous()
    assert not stepper.revealed
    stepper.next()
    assert stepper.revealed  # a step once revealed stays revealed
    stepper.first()
    stepper.next()
    assert not stepper.revealed
    stepper.predict_toggle.value = False
    assert stepper.revealed and stepper.predict_box.layout.display == "none"


# What the predict box accepts and how it names a mistake; every diagnosis the stepper
# relies on, read through the one feedback module the exercises use too.
@pytest.mark.parametrize("answer, expected, code", [
    ([1.0, 2.0], [1.0, 2.0], "correct"),
    ("[1.0, 2.0]", [1.0, 2.0], "correct"),
    ("np.array([1.0, 2.0])", [1.0, 2.0], "correct"),
    ([0.333], [1 / 3], "correct"),  # three significant digits are enough
    ([0.33], [1 / 3], "values"),
    ([-1.0, -2.0], [1.0, 2.0], "sign"),
    ([[1.0, 3.0], [2.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], "transpose"),
    ([[1.0, 2.0, 3.0]], [[1.0], [2.0], [3.0]], "transpose"),
    ([1.0, 2.0, 3.0, 4.0], [[1.0, 2.0], [3.0, 4.0]], "reshape"),
    ([0.0, 0.0], [1.0, 2.0], "zeros"),
    ([3.0, 6.0], [1.0, 2.0], "scale"),
    (6.0, 2.0, "values"),  # a factor between two single numbers would give the answer
    (2.5, 2.0, "values"),
    ([float("nan"), 1.0], [1.0, 2.0], "nonfinite"),
    ([[1.0, 2.0]] * 4, [4.0, 8.0], "missing_broadcast_sum"),
    ([[1.0, 2.0]] * 4, [1.0, 2.0], "missing_reduction"),
    ([[1.0, 2.0], [0.0, 1.0]], [5.0, 7.0], "shape"),
    ("[1, 2", [1.0, 2.0], "unreadable"),
    ("[[1, 2], [3]]", [1.0, 2.0], "unreadable"),
    ("open('x')", [1.0, 2.0], "unreadable"),
])
def test_check_prediction_names_the_mistake(answer, expected, code):
    result = check_predicted_gradient(answer, np.array(expected))
    assert result.diagnosis == code, result
    assert result.ok == (code == "correct")


def test_an_answer_with_the_broadcast_shape_is_told_to_un_broadcast():
    result = check_predicted_gradient([[1.0, 2.0], [0.0, 1.0]], np.array([5.0, 7.0]))
    assert "broadcast shape" in result.message and "un-broadcast" in result.message


# -- the other views ------------------------------------------------------------------------
def test_graph_view_is_a_widget_and_stores_plain_svg():
    y = program()[0]
    view = GraphView(y)
    bundle, metadata = view._repr_mimebundle_()
    assert bundle["image/svg+xml"] == view.svg == draw(y)._repr_svg_()
    assert bundle["text/plain"] == f"GraphView: {len(view.graph.ops)} ops, " \
                                   f"{len(view.graph.tensors)} tensors"
    alt = metadata["image/svg+xml"]["alt"]  # the stored picture's text alternative
    assert alt.startswith(bundle["text/plain"]) and f"{len(view.graph.ops)} ops" in alt
    assert view.picture.svg == view.svg


def test_graph_view_collapses_a_module_to_one_box():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    view = GraphView(model(ag.ones((2, 3))).sum())
    assert {path for _, path in view.module_picker.options} == {"0", "1", "2"}
    linear = next(o.id for o in view.graph.ops if o.module == "0")
    assert f'<g id="{linear}" class="node' in view.svg
    view.module_picker.value = ("0",)
    assert f'<g id="{linear}" class="node' not in view.svg
    assert '<g id="m_0" class="node module_box">' in view.svg


def test_forward_tracer_compares_recording_with_no_grad():
    _, x, w, b = program()

    def f():
        h = (x @ w + b).relu()
        return (h * h + h.tanh() * 2.0).sum()

    tracer = ForwardTracer(f)
    z = x.numpy() @ w.numpy() + b.numpy()
    h = np.maximum(z, 0)
    # matmul keeps x and w, relu a bool mask, h*h keeps h (once), tanh its output.
    kept = x.numpy().nbytes + w.numpy().nbytes + h.size + h.nbytes + np.tanh(h).nbytes
    assert tracer.comparison == {"recording_bytes": kept, "no_grad_bytes": 0,
                                 "max_difference": 0.0}
    assert [r.name for r in tracer.rows] == ["matmul", "add", "relu", "mul", "tanh", "mul",
                                             "add", "sum"]
    assert tracer.rows[-1].held_bytes == kept
    tracer.step = 1
    assert "matmul" in tracer.panel.value and "(4, 2)" in tracer.panel.value
    assert "not kept" not in tracer.rows[0].value  # the observer kept every op's output
    tracer.next()
    assert "Op 2 of 8" in tracer.panel.value
    assert format_bytes(x.numpy().nbytes + w.numpy().nbytes) in tracer.panel.value


def test_forward_tracer_of_an_output_steps_its_ops():
    y = program()[0]
    tracer = ForwardTracer(y)
    assert tracer.comparison is None
    tracer.last()
    assert tracer.step == len(tracer.rows) and "sum" in tracer.panel.value
    rules = style_of(tracer)
    assert rules[STYLES["current"][1]] == [
        tracer.graph.ops[-1].id]


def test_memory_view_counts_forward_bytes_and_backward_releases():
    y, x, w, b = program()
    before = saved_bytes(y)
    view = MemoryView(y)
    h = np.maximum(x.numpy() @ w.numpy() + b.numpy(), 0)
    matmul, mask, hh, tanh_out = x.numpy().nbytes + w.numpy().nbytes, h.size, h.nbytes, h.nbytes
    total = matmul + mask + hh + tanh_out
    assert view.timeline.forward[-1] == total == before
    # visited: sum, add, mul(*2.0), tanh, mul(h*h), relu, add(bias), matmul
    assert list(view.timeline.backward) == [
        total, total, total, total - tanh_out, total - tanh_out - hh,
        total - tanh_out - hh - mask, matmul, 0]
    assert view.png.startswith(b"\x89PNG") and view.image.value == view.png
    assert "held for backward" in view.table.value and format_bytes(total) in view.table.value
    bundle, metadata = view._repr_mimebundle_()
    assert bundle["text/plain"] == f"MemoryView: peak {format_bytes(total)} held for backward"
    assert metadata["image/png"]["alt"] == view.figure.alt


def test_memory_view_png_is_stable_and_takes_other_runs():
    first, second = MemoryView(program()[0]), MemoryView(program()[0])
    assert first.png == second.png
    first.add_timeline(second.timeline.__class__("checkpointed", (10, 20), (20, 0)))
    assert first.png != second.png and len(first.figure.axes[0].lines) == 3  # 2 + boundary


def test_memory_view_reuses_a_steppers_sweep():
    y, x, w, b = program()
    stepper = BackwardStepper(y)
    view = MemoryView(stepper)  # the graph was already swept: no second backward
    assert view.replay is stepper.replay and view.timeline.backward[-1] == 0


@pytest.mark.parametrize("make, error, phrase", [
    (lambda: BackwardStepper([1.0, 2.0]), TypeError, r"e\.g\. BackwardStepper\(loss\)"),
    (lambda: BackwardStepper(ag.tensor([1.0]).sum()), RuntimeError, "does not require grad"),
    (lambda: ForwardTracer(lambda: 3.0), TypeError, "ForwardTracer's function expects a Tensor"),
    (lambda: ForwardTracer(ag.tensor([1.0])), ValueError, "no recorded graph"),
    (lambda: MemoryView("loss"), TypeError, r"MemoryView\(loss\)"),
    (lambda: GraphView(None), TypeError, "got NoneType"),
])
def test_misuse_gets_a_sentence(make, error, phrase):
    with pytest.raises(error, match=phrase):
        make()


def test_predicting_for_an_input_the_step_does_not_have_names_the_inputs():
    stepper, hand = at_matmul()
    with pytest.raises(ValueError, match=r"inputs \['a', 'b'\], not to 'c'"):
        stepper.predict(hand["x"], input="c")


def test_importing_widgets_does_not_load_the_question_bank():
    # The stepper's predict mode uses the exercises' feedback module, and only that.
    code = ("import sys, widgets; widgets.GraphView; widgets.BackwardStepper; "
            "print('widgets.exercises.exercise' in sys.modules, 'ipywidgets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["False", "True"]
    code = "import sys, widgets.render; print('ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["False"]  # the DOT layer needs no Jupyter
