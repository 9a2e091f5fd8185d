"""The derivation widget in a real browser, used with the keyboard only.

JupyterLab serves tests/browser/derivation.ipynb (a DerivationWidget for dW of
tanh(x @ W)). The test focuses the formula box by its label, types a derivation that
forgets the upstream gradient, moves to Check with Tab and presses Enter: the feedback
names the missing upstream gradient. It then types the fixed formula, which checks
nothing while it is typed, and presses Enter in the box itself: that checks, as the
button does, and the focus stays in the box. In JupyterLab's light and dark themes.
Along the way, the focused box and the focused button must show that they have the
focus (a ring, or the box's border colour).
"""

from __future__ import annotations

import pytest
from lab_session import ARTIFACTS, ROOT, SKIPS, lab_page, poll

pytestmark = SKIPS
NOTEBOOK = ROOT / "tests" / "browser" / "derivation.ipynb"

FEEDBACK = """() => [...document.querySelectorAll('.ag-exercise-result')]
    .map(e => e.innerText).join(' ')"""
FOCUS_RING = """() => { const e = document.activeElement; const s = getComputedStyle(e);
    return {tag: e.tagName, text: e.innerText || e.value || '', border: s.borderColor,
            ring: (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0)
                  || (s.boxShadow && s.boxShadow !== 'none')}; }"""
# The box's border colour when it does not have the focus.
RESTING_BORDER = """() => getComputedStyle(
    document.querySelector('.widget-text input')).borderColor"""


def check_with_keyboard(page) -> dict:
    """Tab from the box to the Check button and press Enter; the button's focus state.
    Playwright types in no time at all; a second lets the box's last keystrokes reach
    the kernel before the press, as a person's typing does (the race itself is open)."""
    page.wait_for_timeout(1000)
    page.keyboard.press("Tab")
    focused = page.evaluate(FOCUS_RING)
    page.keyboard.press("Enter")
    return focused


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_learner_checks_a_derivation_with_the_keyboard_only(tmp_path, theme):
    with lab_page(tmp_path, NOTEBOOK, width=900, theme=theme) as page:
        box = page.get_by_role("textbox", name="dW =")
        box.wait_for(timeout=90_000)
        resting = page.evaluate(RESTING_BORDER)
        box.focus()
        in_box = page.evaluate(FOCUS_RING)
        page.keyboard.type("x.T @ (1 - tanh(x @ W)**2)")
        on_button = check_with_keyboard(page)
        first = poll(page, FEEDBACK, lambda t: "upstream gradient" in t)
        box.focus()
        page.keyboard.press("Control+a")
        page.keyboard.type("x.T @ (g * (1 - tanh(x @ W)**2))")
        page.wait_for_timeout(1000)  # the keystrokes reach the kernel (see check_with_keyboard)
        while_typing = page.evaluate(FEEDBACK)
        page.keyboard.press("Enter")  # in the box: Enter checks, as the button does
        second = poll(page, FEEDBACK, lambda t: "match the engine" in t)
        after_enter = page.evaluate(FOCUS_RING)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"browser_derivation_{theme}.png"),
                        full_page=True)
    # JupyterLab marks a focused text box by its border colour, a button by an outline
    assert in_box["tag"] == "INPUT" and (in_box["ring"] or in_box["border"] != resting), \
        (in_box, resting)
    assert on_button["tag"] == "BUTTON" and "Check" in on_button["text"], on_button
    assert on_button["ring"], on_button
    assert "does not use the upstream gradient g" in first, first
    assert while_typing == first, (while_typing, first)  # typing checks nothing
    assert "match the engine's gradients" in second, second
    assert after_enter["tag"] == "INPUT" and "tanh" in after_enter["text"], after_enter
