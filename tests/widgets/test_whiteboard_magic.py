"""``%%derivation``: equations written as on the whiteboard in a cell of their own, typeset
and checked (issue #41). The verdicts come from check_derivation, whose right and wrong
formulas tests/exercises/test_whiteboard.py holds; here: the cell's form and its sentences."""

from __future__ import annotations

import pytest

import autograd_core as ag

IPython = pytest.importorskip("IPython")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

from widgets.whiteboard_magic import derivation_result  # noqa: E402


def layer(x, W):
    return ag.tanh(x @ W)


ARGUMENTS = (layer, {"x": (4, 3), "W": (3, 2)}, {})
RIGHT = r"""
% both gradients of a tanh layer
$$\frac{\partial L}{\partial W} = x^\top \left(g \odot (1 - \tanh^2(x W))\right)$$
∂L/∂x = (g ⊙ (1 − tanh²(x W))) Wᵀ
"""


def test_every_equation_is_checked_by_its_left_side():
    result = derivation_result(ARGUMENTS, RIGHT)
    assert result.ok and "dW, dx" in result.message


def test_a_missing_local_derivative_is_caught_in_the_cell():
    result = derivation_result(ARGUMENTS, r"\frac{\partial L}{\partial W} = x^\top g")
    assert not result.ok and result.name == "dW"


@pytest.mark.parametrize(("body", "words"), [
    ("", "Nothing to check yet"),
    ("x^T g", "has no left side this check can read"),
    ("dW = x^T g\n∂L/∂W = x^T g", "Two equations give the gradient of W"),
    ("dQ = x^T g", "Q has a formula but no shape"),
])
def test_a_cell_the_check_cannot_use_gets_a_sentence(body, words):
    result = derivation_result(ARGUMENTS, body)
    assert not result.ok and words in result.message


@pytest.fixture(scope="module")
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "widgets.whiteboard_magic")
    ip.user_ns["layer"] = layer
    yield ip
    InteractiveShell.clear_instance()


def test_the_magic_typesets_the_equations_and_shows_the_verdict(shell):
    with capture_output() as shown:
        shell.run_cell_magic("derivation", 'layer, {"x": (4, 3), "W": (3, 2)}', RIGHT)
    kinds = [sorted(output.data) for output in shown.outputs]
    assert kinds[0] == ["text/latex", "text/plain"]  # the LaTeX line, typeset
    assert "text/markdown" in kinds[1]  # the Unicode line, as written
    assert shown.outputs[1].data["text/plain"] == "∂L/∂x = (g ⊙ (1 − tanh²(x W))) Wᵀ"
    assert "match the engine's gradients" in shown.outputs[-1].data["text/plain"]


@pytest.mark.parametrize(("line", "words"), [
    ("", "the first line names your engine function"),
    ("no_such_function, {}", "NameError"),
    ('layer {"x": (4, 3)}', "SyntaxError"),
])
def test_a_first_line_that_cannot_be_read_gets_a_sentence(shell, line, words):
    with capture_output() as shown:
        shell.run_cell_magic("derivation", line, "dW = x^T g")
    message = shown.outputs[-1].data["text/plain"]
    assert words in message and "Traceback" not in shown.stdout + shown.stderr
