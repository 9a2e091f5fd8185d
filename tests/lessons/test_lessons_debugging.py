"""widgets.lessons.debugging.readable: notebook cell files named as such, nothing else."""

import pytest

from widgets.lessons.debugging import is_notebook_cell, readable

CELLS = {"/tmp/ipykernel_4242/3141592653.py", "/tmp/ipykernel_4242/271828.py"}

TRACE = (
    "The op 'div' was created by this forward call (innermost last):\n"
    '  File "/tmp/ipykernel_4242/271828.py", line 2, in <module>\n'
    "    table = instrument(model, batch)\n"
    '  File "/home/me/project/layers.py", line 4, in forward\n'
    "    return x / x.sum(dim=1, keepdim=True)\n"
)


@pytest.mark.parametrize("text, expected", [
    ('File "/tmp/ipykernel_4242/3141592653.py", line 4, in forward',
     "notebook cell, line 4, in forward"),
    ('File "/home/me/project/train.py", line 10, in step',         # a real file: unchanged
     'File "/home/me/project/train.py", line 10, in step'),
    ('File "/tmp/ipykernel_9/1.py", line 3',                       # not a cell of this kernel
     'File "/tmp/ipykernel_9/1.py", line 3'),
    ("no frames at all", "no frames at all"),
])
def test_readable_renames_only_cells(text, expected):
    assert readable(text, is_cell=CELLS.__contains__) == expected


def test_readable_keeps_the_rest_of_a_message():
    expected = TRACE.replace('File "/tmp/ipykernel_4242/271828.py", line', "notebook cell, line")
    assert readable(TRACE, is_cell=CELLS.__contains__) == expected


def test_readable_accepts_exceptions():
    error = RuntimeError('bad\n  File "/tmp/ipykernel_4242/3141592653.py", line 1, in f')
    assert readable(error, is_cell=CELLS.__contains__) == "bad\n  notebook cell, line 1, in f"


def test_outside_ipython_nothing_is_renamed():
    # pytest runs without an IPython shell: get_ipython() is None (or IPython is not loaded)
    frame = 'File "/tmp/ipykernel_1/2.py", line 1'
    assert is_notebook_cell("/tmp/ipykernel_1/2.py") is False
    assert readable(frame) == frame


def test_gradients_without_reset_shows_the_sum_and_the_curves(capsys):
    """S2's comparison (lesson 11, behind after_solving): .grad after two backward calls
    equals the sum of the two batches' gradients, then the two loss curves are drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from widgets.lessons.debugging import gradients_without_reset

    plt.close("all")
    gradients_without_reset()
    lines = capsys.readouterr().out.splitlines()
    after_two = np.array(lines[0].split(":", 1)[1].strip(" []").split(), dtype=float)
    summed = np.array(lines[1].split(":", 1)[1].strip(" []").split(), dtype=float)
    assert np.allclose(after_two, summed)
    (axes,) = plt.gcf().axes if plt.get_fignums() else (None,)
    labels = [line.get_label() for line in axes.get_lines()] if axes else []
    assert labels == ["zero_grad() every step", "never reset"]
    plt.close("all")
