"""Source lines: each recorded op remembers the line of the learner's code that ran it.

Expected lines come from the test itself (``inspect.currentframe().f_lineno``), never
from the engine. The engine records nothing by default; importing ``widgets`` turns
it on; the inspector shows the line; the graph's pictures never do.
"""

from __future__ import annotations

import html
import inspect
import linecache
import os
import subprocess
import sys
from pathlib import Path

import autograd_core as ag
import widgets  # noqa: F401 - importing widgets is what turns source lines on
from autograd_core.recording import source
from autograd_core.tools.graph import capture
from widgets.inspector import inspect_node
from widgets.render import to_dot
from widgets.replay import record

ROOT = Path(__file__).resolve().parents[2]
HERE = inspect.currentframe().f_code.co_filename


def here() -> int:
    """The line number of the line that called ``here()``."""
    return inspect.currentframe().f_back.f_lineno


def run_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter at the repository root; its stdout."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_an_op_records_the_file_line_and_function_that_called_it():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with ag.record_source():
        line = inspect.currentframe().f_lineno + 1
        y = x * 2.0
        z = (y + 1.0).tanh(); line_z = here()  # noqa: E702 - two ops on one line
    name = "test_an_op_records_the_file_line_and_function_that_called_it"
    assert y.grad_fn.source == (HERE, line, name)
    assert z.grad_fn.source[:2] == (HERE, line_z)
    assert os.path.samefile(y.grad_fn.source[0], __file__)
    assert source.source_line(y.grad_fn.source) == "y = x * 2.0"


def test_ops_inside_nn_modules_point_at_the_call_site_not_the_engine():
    ag.manual_seed(0)
    model = ag.nn.Sequential(ag.nn.Linear(2, 3), ag.nn.ReLU(), ag.nn.Linear(3, 1))
    x = ag.randn(4, 2)
    with ag.record_source():
        out = model(x); line = here()  # noqa: E702
        loss = out.sum(); loss_line = here()  # noqa: E702
    g = capture(loss)
    assert [o.op for o in g.ops][-1] == "sum"
    for op in g.ops[:-1]:  # linear, relu, linear: all recorded inside the engine's code
        assert op.source[:2] == (HERE, line), op
    assert g.ops[-1].source[:2] == (HERE, loss_line)


class Doubler(ag.nn.Module):
    """A module the learner writes: its ops point into its own forward."""

    def forward(self, x):
        return x * 2.0


FORWARD_LINE = inspect.getsourcelines(Doubler.forward)[1] + 1


def test_ops_in_a_module_the_learner_wrote_point_into_its_forward():
    x = ag.tensor([1.0], requires_grad=True)
    with ag.record_source():
        y = Doubler()(x)
    assert y.grad_fn.source == (HERE, FORWARD_LINE, "forward")
    assert source.describe_source(y.grad_fn.source) == (
        f"test_source_lines.py:{FORWARD_LINE} in forward")


def test_code_under_a_skipped_directory_is_attributed_to_its_caller(tmp_path, monkeypatch):
    helper = tmp_path / "lesson_helper.py"
    helper.write_text("import autograd_core as ag\n\ndef square(x):\n    return x * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(source, "_prefixes", source._prefixes)  # restored afterwards
    import lesson_helper

    x = ag.tensor([3.0], requires_grad=True)
    with ag.record_source():
        inside = lesson_helper.square(x)
        source.skip_code_under(str(tmp_path))
        outside = lesson_helper.square(x); line = here()  # noqa: E702
    assert inside.grad_fn.source[1:] == (4, "square")
    assert outside.grad_fn.source[:2] == (HERE, line)
    sys.modules.pop("lesson_helper", None)


def test_the_widgets_package_is_skipped_like_the_engine():
    widgets_dir = os.path.join(os.path.dirname(os.path.abspath(widgets.__file__)), "")
    assert widgets_dir in source._prefixes


def test_off_by_default_in_the_engine_alone():
    out = run_python(
        "import sys, autograd_core as ag\n"
        "x = ag.tensor([1.0], requires_grad=True)\n"
        "y = x * 2.0\n"
        "print(ag.source_recording(), y.grad_fn.source, 'widgets' in sys.modules)")
    assert out == "False None False"


def test_importing_widgets_turns_it_on():
    out = run_python(
        "import autograd_core as ag\n"
        "before = ag.source_recording()\n"
        "import widgets\n"
        "x = ag.tensor([1.0], requires_grad=True)\n"
        "y = x * 2.0\n"
        "print(before, ag.source_recording(), y.grad_fn.source)")
    assert out == "False True ('<string>', 5, '<module>')"


def test_the_switch_works_as_a_call_and_as_a_context_manager():
    was = ag.source_recording()
    try:
        ag.record_source(False)
        assert not ag.source_recording()
        with ag.record_source():
            assert ag.source_recording()
            with ag.record_source(False):
                x = ag.tensor([1.0], requires_grad=True)
                y = x * 2.0
            assert ag.source_recording()
        assert not ag.source_recording()
        assert y.grad_fn.source is None
        assert capture(y).ops[0].source is None
    finally:
        ag.record_source(was)


def test_notebook_cells_are_described_without_machine_paths():
    cell = "/tmp/ipykernel_123/456.py"
    lines = ["import autograd_core as ag\n", "x = ag.tensor([1.0])\n", "y = x @ w\n"]
    old = linecache.cache.get(cell)
    # What IPython does with every cell it runs, so tracebacks can show its lines.
    linecache.cache[cell] = (sum(map(len, lines)), None, lines, cell)
    try:
        assert source.describe_source((cell, 3, "<module>")) == "cell line 3"
        assert source.source_line((cell, 3, "<module>")) == "y = x @ w"
    finally:
        linecache.cache.pop(cell, None)
        if old is not None:
            linecache.cache[cell] = old
    assert source.describe_source(("<ipython-input-5-0a1b2c>", 2, "f")) == "cell line 2 in f"
    assert source.describe_source(("/home/someone/course/model.py", 12, "<module>")) == (
        "model.py:12")
    assert source.describe_source(("<string>", 1, "<module>")) == "<string> line 1"
    assert source.source_line(("<string>", 1, "<module>")) is None
    assert source.describe_source(None) is None and source.source_line(None) is None


def test_the_inspector_shows_the_line_for_an_op_and_for_the_tensor_it_made():
    x = ag.tensor([[1.0, -2.0]], requires_grad=True, name="x")
    with ag.record_source():
        h = ag.where(x > 0.0, x, x * 0.5); line = here()  # noqa: E702
        loss = h.sum()
    replay = record(loss)
    where = next(o for o in replay.graph.ops if o.op == "where")
    text = html.escape("h = ag.where(x > 0.0, x, x * 0.5); line = here()  # noqa: E702")
    op_html = inspect_node(replay, where.id, 0)
    assert f"<code>{text}</code>" in op_html
    assert f"test_source_lines.py:{line} in " in op_html
    assert "recorded at" in op_html
    tensor_html = inspect_node(replay, where.output, 0)
    assert "made at" in tensor_html and f"<code>{text}</code>" in tensor_html
    leaf_html = inspect_node(replay, "t0", 0)  # x: made by the program, no op, no line
    assert "made at" not in leaf_html


def test_the_inspector_says_nothing_of_an_op_recorded_without_a_line():
    with ag.record_source(False):
        x = ag.tensor([1.0], requires_grad=True)
        loss = (x * 2.0).sum()
    replay = record(loss)
    assert "recorded at" not in inspect_node(replay, "op0", 0)
    assert "made at" not in inspect_node(replay, replay.graph.ops[0].output, 0)


def program():
    ag.manual_seed(0)
    model = ag.nn.Sequential(ag.nn.Linear(3, 4), ag.nn.Tanh(), ag.nn.Linear(4, 2))
    x = ag.tensor(ag.randn(5, 3).numpy(), name="x")
    return ag.nn.functional.cross_entropy(model(x), ag.tensor([0, 1, 1, 0, 1]))


def test_the_graph_and_its_picture_are_the_same_with_and_without_source_lines():
    with ag.record_source(False):
        off = capture(program())
    with ag.record_source(True):
        on = capture(program())
    assert all(o.source is None for o in off.ops)
    assert all(o.source is not None for o in on.ops)
    assert on == off and repr(on) == repr(off)
    assert to_dot(on) == to_dot(off)
    assert to_dot(on, show_values=True) == to_dot(off, show_values=True)
    assert "test_source_lines" not in to_dot(on)


def probe():
    """(where(caller()) seen from the caller's frame, that frame's f_lineno)."""
    return source.where(source.caller(1)), sys._getframe(1).f_lineno


def test_the_line_worked_out_later_is_the_line_f_lineno_gives():
    got, expected = probe()
    assert got == (HERE, expected, "test_the_line_worked_out_later_is_the_line_f_lineno_gives")
    got, expected = (
        probe()
    )
    assert got[1] == expected == here() - 2
    assert source.where(None) is None
