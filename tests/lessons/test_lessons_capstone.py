"""widgets.lessons.capstone: the capstone lesson's digit grid and training curves."""

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="matplotlib is not installed: the lesson pictures are "
                    "not tested (install it with: pip install -e '.[widgets]')")

from widgets.lessons.capstone import MISTAKE_COLOUR, digit_grid, training_curves  # noqa: E402


def history(losses, train, test):
    return [{"epoch": i + 1, "loss": l, "train_accuracy": a, "test_accuracy": b,
             "seconds": 0.1 * i} for i, (l, a, b) in enumerate(zip(losses, train, test))]


@pytest.mark.parametrize("shape", [(12, 1, 8, 8), (12, 8, 8)])
@pytest.mark.parametrize("columns, rows", [(10, 2), (4, 3), (12, 1), (50, 1)])
def test_grid_has_one_image_per_input_laid_out_in_rows(shape, columns, rows):
    images = np.arange(np.prod(shape), dtype=float).reshape(shape) / np.prod(shape)
    fig = digit_grid(images, np.arange(12) % 10, columns=columns)
    assert len(fig.axes) == 12
    assert fig.axes[0].get_subplotspec().get_geometry()[:2] == (rows, min(columns, 12))
    np.testing.assert_array_equal(fig.axes[5].get_images()[0].get_array(),
                                  images.reshape(12, 8, 8)[5])


@pytest.mark.parametrize("labels, predicted, titles, red", [
    ([3, 1, 4], None, ["3", "1", "4"], [False, False, False]),
    ([3, 1, 4], [3, 7, 4], ["3", "1→7", "4"], [False, True, False]),
    ([0, 0], [9, 8], ["0→9", "0→8"], [True, True]),
])
def test_titles_name_the_label_and_mark_wrong_predictions(labels, predicted, titles, red):
    fig = digit_grid(np.zeros((len(labels), 8, 8)), labels, predicted)
    assert [ax.get_title() for ax in fig.axes] == titles
    assert [ax.title.get_color() == MISTAKE_COLOUR for ax in fig.axes] == red


def test_grid_takes_engine_tensors():
    import autograd_core as ag

    fig = digit_grid(ag.zeros(2, 1, 8, 8), ag.tensor([5, 6]), ag.tensor([5, 0]))
    assert [ax.get_title() for ax in fig.axes] == ["5", "6→0"]


@pytest.mark.parametrize("images, labels, predicted, words", [
    (np.zeros((2, 3, 8, 8)), [1, 2], None, "must be"),
    (np.zeros((2, 8, 8)), [1], None, "2 images but 1 labels"),
    (np.zeros((2, 8, 8)), [1, 2], [1], "2 images but 1 predictions"),
    (np.zeros((0, 8, 8)), [], None, "no images"),
])
def test_grid_explains_bad_input(images, labels, predicted, words):
    with pytest.raises(ValueError, match=words):
        digit_grid(images, labels, predicted)


@pytest.mark.parametrize("losses, train, test", [
    ([2.0, 1.0, 0.5], [0.3, 0.6, 0.9], [0.25, 0.55, 0.85]),
    ([0.7], [0.8], [0.75]),
])
def test_curves_plot_loss_and_both_accuracies_in_percent(losses, train, test):
    fig = training_curves(history(losses, train, test))
    loss_ax, acc_ax = fig.axes
    assert (loss_ax.get_title(), acc_ax.get_title()) == ("training loss", "accuracy")
    np.testing.assert_allclose(loss_ax.lines[0].get_ydata(), losses)
    lines = {line.get_label(): line.get_ydata() for line in acc_ax.lines}
    np.testing.assert_allclose(lines["train accuracy"], 100 * np.array(train))
    np.testing.assert_allclose(lines["test accuracy"], 100 * np.array(test))
    np.testing.assert_array_equal(acc_ax.lines[0].get_xdata(), range(1, len(losses) + 1))


@pytest.mark.parametrize("bad, words", [
    ([], "empty"),
    ([{"epoch": 1, "loss": 1.0}], "missing"),
])
def test_curves_explain_bad_history(bad, words):
    with pytest.raises(ValueError, match=words):
        training_curves(bad)


# -- the lesson's tasks: asked before anything answers them ------------------------------------

import json  # noqa: E402
from pathlib import Path  # noqa: E402

LESSON = Path(__file__).resolve().parents[2] / "notebooks" / "12_capstone.ipynb"
# Peaks of plans within C1's limits: on the check's batch, and on the lesson's (2 segments).
FITTING_PEAKS = ("612,096", "606,336", "606,704", "606704", "612096")


def _cells():
    cells = json.loads(LESSON.read_text())["cells"]
    return cells, ["".join(c["source"]) for c in cells]


def _shown(cell) -> str:
    return "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                   for o in cell.get("outputs", []))


def test_lesson_12_has_both_tasks_and_their_progress():
    cells, sources = _cells()
    tagged = [s for c, s in zip(cells, sources) if "exercise" in c["metadata"].get("tags", [])]
    assert len(tagged) == 2 and "C1(plan)" in tagged[0] and "C2(module=" in tagged[1]
    assert any('Progress.lesson("12")' in s for s in sources)


def test_no_stored_output_shows_a_plan_that_fits_or_where_the_bug_is():
    cells, sources = _cells()
    shown = "\n".join(_shown(c) for c in cells)
    assert not any(peak in shown for peak in FITTING_PEAKS)
    assert "5.body.act" not in shown and "beta" not in shown
    assert "passes a gradient check: False" in shown   # the symptom is shown, the place is not


def test_comparisons_that_answer_a_task_wait_for_it():
    cells, sources = _cells()
    c1 = next(i for i, s in enumerate(sources) if "C1(plan)" in s)
    c2 = next(i for i, s in enumerate(sources) if "C2(module=" in s)
    splits = next(i for i, s in enumerate(sources) if "def even_splits" in s)
    hunt = next(i for i, s in enumerate(sources) if "def how_wrong" in s)
    assert c1 < splits and 'after_solving("C1", even_splits)' in sources[splits]
    assert c2 < hunt and 'after_solving("C2", how_wrong)' in sources[hunt]
    assert "gives C1's answer away" in _shown(cells[splits])
    assert "gives C2's answer away" in _shown(cells[hunt])


def test_the_comparison_after_c2_runs_on_the_learners_backward(tmp_path, monkeypatch, capsys):
    """Once C2 is solved, lesson 12's comparison puts the learner's swish_backward into the
    module they named: block 5's parameters learned from a wrong gradient, those before it
    too (the error flows back through them), the classifier after it did not."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    from autograd_core.nn import functional as F
    from widgets.exercises import C2, after_solving
    from widgets.exercises.capstone_tasks.planted_bug import with_backward

    def swish_backward(x, beta, g):
        s = 1 / (1 + np.exp(-beta * x))
        return g * (s + beta * x * s * (1 - s))

    cells, sources = _cells()
    assert C2(module="5.body.act", backward=swish_backward).ok
    namespace = {"C2": C2, "after_solving": after_solving, "with_backward": with_backward,
                 "F": F, "np": np, "hunt": C2.problem(), "buggy_module": "5.body.act",
                 "swish_backward": swish_backward}
    exec(next(s for s in sources if "def how_wrong" in s), namespace)  # noqa: S102
    errors = {line.split()[0]: float(line.split()[-1])
              for line in capsys.readouterr().out.splitlines() if "relative error" in line}
    assert errors["9.weight"] == 0.0 and errors["5.body.conv1.weight"] > 0
    assert errors["0.weight"] > 0
