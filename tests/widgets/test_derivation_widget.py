"""DerivationWidget without a browser: a labelled box per formula, Check (or Enter in a
box) shows the same Result as check_derivation, and empty or unreadable boxes get a
sentence."""

import pytest

import autograd_core as ag

pytest.importorskip("ipywidgets")

from widgets import DerivationWidget  # noqa: E402
from widgets.feedback import check_derivation  # noqa: E402

SHAPES = {"x": (4, 3), "W": (3, 2)}


def layer(x, W):
    return ag.tanh(x @ W)


def test_each_box_is_labelled_and_check_names_the_mistake():
    view = DerivationWidget(layer, SHAPES, wrt=("W",))
    assert [b.description for b in view.boxes.values()] == ["dW ="]
    view.boxes["W"].value = "x.T @ (1 - tanh(x @ W)**2)"
    view.check_button.click()
    same = check_derivation(layer, {"W": "x.T @ (1 - tanh(x @ W)**2)"}, SHAPES)
    assert view.result.diagnosis == same.diagnosis == "missing_upstream"
    assert view.feedback.value == same._repr_html_()
    view.boxes["W"].value = "x.T @ (g * (1 - tanh(x @ W)**2))"
    assert view.check().ok and "match the engine" in view.feedback.value


def test_empty_and_unreadable_boxes_get_a_sentence():
    view = DerivationWidget(layer, SHAPES)
    assert list(view.boxes) == ["x", "W"]
    assert not view.check().ok and "Write a formula" in view.feedback.value
    view.boxes["x"].value = "import os"
    result = view.check()
    assert not result.ok and "not a formula I can read" in result.message


def from_the_front_end(box, content: dict) -> None:
    """A custom message from the box's view, as the kernel receives it (Enter sends
    ``{"event": "submit"}``)."""
    box._handle_msg({"content": {"data": {"method": "custom", "content": content}},
                     "buffers": []})


def test_enter_in_a_box_checks_and_typing_does_not():
    view = DerivationWidget(layer, SHAPES)
    view.boxes["W"].value = "x.T @ (g * (1 - tanh(x @ W)**2))"  # typing syncs the value only
    from_the_front_end(view.boxes["W"], {"event": "something else"})
    assert view.result is None and view.feedback.value == ""
    from_the_front_end(view.boxes["W"], {"event": "submit"})
    assert view.result.ok and "match the engine" in view.feedback.value
    view.boxes["x"].value = "g @ W.T"  # without tanh's derivative
    from_the_front_end(view.boxes["x"], {"event": "submit"})
    shown = view.feedback.value
    assert not view.result.ok and "dx: Your answer differs" in shown
    view.check()
    assert view.feedback.value == shown  # what the button shows
