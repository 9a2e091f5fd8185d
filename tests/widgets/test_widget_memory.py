"""A closed view frees what it held: its widgets leave ipywidgets' registry, so once
the program lets the view go, nothing keeps it (or its recorded sweep, graph and
pictures) alive. (A closed view still referenced keeps working, as a closed
ipywidget does: see test_adversarial_tools.)

Measured, not timed: tracemalloc counts the bytes still allocated after 40 views
are created and closed in a loop (the bound is 26 KiB a view, 1 MiB for the 40), and
the registry of live widgets is counted before and after. The 20 programs the loop
draws are each drawn once before, untraced, so the shared layout cache (bounded in
bytes: ``test_the_layout_cache_is_bounded_in_bytes``) is full when the count starts,
and what stays is what the closed views kept.
"""

import gc
import sys
import time
import tracemalloc
import weakref
from pathlib import Path

import pytest
from ipywidgets.widgets.widget import _instances
from sample_programs import broadcast_mask_fanout as program

from widgets import BackwardStepper, ForwardTracer, GraphView
from widgets import svg as svg_module

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

SEEDS = 20  # programs with new values and new pictures
LOOPS = 40  # views made and closed while tracemalloc counts
PER_VIEW = 26 * 1024  # bytes a closed view may leave behind

VIEWS = {
    "BackwardStepper": lambda seed: BackwardStepper(program(seed)[0]),
    "ForwardTracer": lambda seed: ForwardTracer(program(seed)[0]),
    "GraphView": lambda seed: GraphView(program(seed)[0]),
}


def kept_after_loop(make) -> tuple[int, int]:
    """(bytes still allocated, widgets still registered) after LOOPS views made and
    closed. Each of the SEEDS programs is drawn once first (imports, first-use caches,
    the layout cache full), then the loop draws them again, twice over."""
    for seed in range(SEEDS):
        make(seed).close()
    gc.collect()
    widgets_before = len(_instances)
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(LOOPS):
            view = make(i % SEEDS)
            view.close()
            del view
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return kept, len(_instances) - widgets_before


@pytest.mark.parametrize("kind", list(VIEWS))
def test_closed_views_keep_under_26_kib_each(kind):
    kept, widgets_left = kept_after_loop(VIEWS[kind])
    assert widgets_left == 0, f"{widgets_left} widgets of closed {kind}s are still registered"
    assert kept < LOOPS * PER_VIEW, f"{LOOPS} closed {kind}s keep {kept / 1024:.0f} KiB"


@pytest.mark.parametrize("kind", list(VIEWS))
def test_close_closes_every_child_widget(kind):
    before = set(_instances)
    view = VIEWS[kind](0)
    made = set(_instances) - before
    assert len(made) > 10  # buttons, sliders, layouts, styles...
    view.close()
    assert not made & set(_instances)


@pytest.mark.parametrize("kind", list(VIEWS))
def test_nothing_keeps_a_closed_view_or_its_graph_alive(kind):
    # The registry, the comms, the observers, the layout thread: once closed and let
    # go by the program, the view and the graph data it recorded are collected.
    view = VIEWS[kind](0)
    if hasattr(view, "next"):
        view.next()
    refs = [weakref.ref(view), weakref.ref(view.graph)]
    if hasattr(view, "replay"):
        refs.append(weakref.ref(view.replay))
    view.close()
    del view
    gc.collect()
    assert [r() for r in refs] == [None] * len(refs)


def test_a_paged_stepper_closed_mid_layout_is_collected():
    from bench.graph_shapes import chain

    stepper = BackwardStepper(chain(3000), picture="neighbourhood")
    stepper.step = len(stepper.replay) // 2  # a far page: laid out in the background
    ref = weakref.ref(stepper)
    stepper.close()
    del stepper
    for _ in range(100):  # the layout thread drops its reference when its job ends
        gc.collect()
        if ref() is None:
            break
        time.sleep(0.05)
    assert ref() is None


def test_the_layout_cache_is_bounded_in_bytes(monkeypatch):
    cache = svg_module._Cache()
    monkeypatch.setattr(svg_module, "CACHE_BYTES", 10_000)
    for i in range(50):
        cache.put(f"digraph {{ n{i} }}" + " " * 500, "<svg>" + "x" * 500)
    assert cache._bytes <= 10_000 and len(cache) < 50
    cache.put("big", "x" * 20_000)  # larger than the whole budget: not kept
    assert cache.get("big") is None
