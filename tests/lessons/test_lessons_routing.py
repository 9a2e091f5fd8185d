"""widgets.lessons.routing: heatmap cells carry the right labels, windows are outlined."""

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="matplotlib is not installed: the routing lesson's "
                    "plots are not tested (install it with: pip install -e '.[widgets]')")

from matplotlib.figure import Figure  # noqa: E402

from widgets.lessons.routing import number_text, outline_windows, show_grid  # noqa: E402


@pytest.mark.parametrize("value, text", [
    (0.25, "0.25"), (-0.0, "0"), (1 / 9, "0.111"), (4.0, "4"), (-2.5, "-2.5"), (1234.0, "1.23e+03"),
])
def test_number_text(value, text):
    assert number_text(value) == text


def axes():
    return Figure().add_subplot()


def test_show_grid_writes_every_value_in_row_major_order():
    ax = axes()
    show_grid(ax, np.array([[[[1.0, 0.5], [0.0, -0.25]]]]), "dx")  # (1, 1, 2, 2) like an image
    assert [t.get_text() for t in ax.texts] == ["1", "0.5", "0", "-0.25"]
    assert [t.get_position() for t in ax.texts] == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert ax.get_title() == "dx"


def test_show_grid_of_a_constant_array():
    ax = axes()
    show_grid(ax, np.zeros((2, 3)))
    assert len(ax.texts) == 6 and all(t.get_color() == "black" for t in ax.texts)


@pytest.mark.parametrize("shape, kernel, stride, windows", [
    ((4, 4), 2, 2, 4), ((4, 4), 3, 1, 4), ((4, 4), 2, 1, 9), ((5, 5), 3, 2, 4),
])
def test_outline_windows_draws_one_box_per_window(shape, kernel, stride, windows):
    ax = axes()
    outline_windows(ax, shape, kernel, stride)
    assert len(ax.patches) == windows
    first = ax.patches[0]
    assert (first.get_x(), first.get_y(), first.get_width()) == (-0.5, -0.5, kernel)


def test_step_size_errors_shows_both_curves_and_the_central_one_wins(capsys):
    """Lesson 06 shows it once B1 is solved: one-sided vs central differences, step by step."""
    from widgets.lessons.routing import step_size_errors

    fig = step_size_errors()
    (ax,) = fig.axes
    assert len(ax.get_lines()) == 2 and ax.get_xscale() == ax.get_yscale() == "log"
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [r[0] for r in rows] == ["1e-02", "1e-04", "1e-06", "1e-08", "1e-10"]
    one_sided, central = float(rows[2][1]), float(rows[2][2])  # h = 1e-6
    assert central < one_sided / 1000
