"""widgets.lessons.convolution.array_panels: what the convolution lesson's pictures show."""

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="matplotlib is not installed: the lesson pictures are "
                    "not tested (install it with: pip install -e '.[widgets]')")

from matplotlib.patches import Rectangle  # noqa: E402

from widgets.lessons.convolution import array_panels  # noqa: E402


def cell_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


@pytest.mark.parametrize("shapes", [[(3, 3)], [(5, 5), (3, 3), (3, 3)], [(2, 4), (4, 2)]])
def test_one_titled_panel_per_array_with_every_value_written(shapes):
    panels = {f"a{i}": np.arange(np.prod(s), dtype=float).reshape(s) - 1
              for i, s in enumerate(shapes)}
    fig = array_panels(panels)
    assert [ax.get_title() for ax in fig.axes] == list(panels)
    for ax, a in zip(fig.axes, panels.values()):
        assert len(ax.texts) == a.size
        assert ax.get_images()[0].get_array().shape == a.shape


@pytest.mark.parametrize("values, decimals, expected", [
    ([[0.0, 1.25]], 1, ["0", "1.2"]),
    ([[-2.0, 0.5]], 2, ["-2.00", "0.50"]),
    ([[-0.0, 3.0]], 0, ["0", "3"]),
])
def test_values_are_written_rounded_and_zero_is_plain(values, decimals, expected):
    fig = array_panels({"a": np.array(values)}, decimals=decimals)
    assert cell_texts(fig.axes[0]) == expected


@pytest.mark.parametrize("values", [[[1.0, -3.0]], [[0.5, 0.25]], [[0.0, 0.0]]])
def test_colour_scale_is_symmetric_about_zero(values):
    image = array_panels({"a": np.array(values)}).axes[0].get_images()[0]
    low, high = image.get_clim()
    assert low == -high
    assert high == (np.max(np.abs(values)) or 1.0)


@pytest.mark.parametrize("box, corners", [
    ((1, 2, 3, 3), [(1.5, 0.5, 3, 3)]),
    ([(0, 0, 1, 1), (2, 2, 2, 1)], [(-0.5, -0.5, 1, 1), (1.5, 1.5, 1, 2)]),
])
def test_boxes_outline_the_given_cells(box, corners):
    fig = array_panels({"x": np.zeros((5, 5)), "w": np.ones((2, 2))}, boxes={"x": box})
    patches = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert [(p.get_x(), p.get_y(), p.get_width(), p.get_height()) for p in patches] == corners
    assert not fig.axes[1].patches


def test_tensors_of_one_image_and_one_channel_are_squeezed():
    import autograd_core as ag

    fig = array_panels({"x": ag.ones(1, 1, 4, 3)})
    assert fig.axes[0].get_images()[0].get_array().shape == (4, 3)


def test_large_arrays_are_not_annotated():
    assert not array_panels({"big": np.ones((20, 20))}).axes[0].texts


@pytest.mark.parametrize("panels, boxes, words", [
    ({"x": np.ones((2, 2, 2))}, None, "must be a 2-D array"),
    ({}, None, "nothing to draw"),
    ({"x": np.ones((2, 2))}, {"y": (0, 0, 1, 1)}, "do not exist"),
])
def test_bad_input_is_explained(panels, boxes, words):
    with pytest.raises(ValueError, match=words):
        array_panels(panels, boxes=boxes)
