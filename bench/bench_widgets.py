"""Widget benchmarks: lay a graph out once, then restyle it per step.

For graphs of about 50, 200 and 1000 nodes (a deep tanh MLP: eight nodes per
layer) and for a graph whose one leaf is used all along a long chain (the
slowest shape for Graphviz; both from ``bench/graph_shapes.py``), it measures:

* DOT: capture + ``to_dot`` (ms);
* layout: graphviz-pure DOT -> SVG, cache cleared (ms), and the SVG's size;
* stepper: building a ``BackwardStepper`` (capture, DOT, layout, the sweep);
* restyle: computing one step's ``<style>`` block (what the browser receives per
  step), median and worst over every step, and its size;
* step: everything the kernel does for one step (style, both panels, the
  leaves' ``.grad``), median and worst.

The goal is a step under 50 ms at 1000 nodes, with the layout paid once per graph.
Run: ``python bench/bench_widgets.py [--rounds N] [--long-edges]``.

``--scale``: any size, never a hang. For the three shapes of ``graph_shapes.SHAPES``
(a chain, the reused-leaf loop ``acc = acc * x + c``, a module-heavy CNN) at about
300, 1,000, 3,000 and 10,000 nodes (ops + tensors), it measures

* predicted: ``widgets.render.layout_estimate`` of the whole graph (s), no Graphviz;
* full layout: ``to_dot`` + graphviz-pure on the whole graph (s, stopped at
  ``--full-timeout``; ``--no-full`` skips it: the 10,000-node ones are slow);
* GraphView, BackwardStepper, ForwardTracer: kernel-side seconds from the output
  tensor to the widget built (capture, DOT, layout, the sweep), caches cleared;
  what the view drew (whole, collapsed modules, first/last ops, pages);
* step: one step of the stepper (style, panels, leaves' ``.grad``, a new page when
  the op leaves the page shown), median and worst over the first 500 steps walked
  in a tight loop, and over 30 random jumps.

Every view must show something within 2 s at any size, and a step take < 50 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root
from bench.graph_shapes import mlp, shared_weight  # noqa: E402
from widgets.live import live  # noqa: E402
from widgets.render import to_dot  # noqa: E402
from widgets.svg import to_svg  # noqa: E402


def ms(seconds: float, digits: int = 1) -> str:
    return f"{seconds * 1e3:8.{digits}f}"


def timed(fn, rounds: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(rounds):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def measure(name: str, build, rounds: int) -> dict:
    from widgets import BackwardStepper

    y = build()
    view = live(y)
    nodes = len(view.graph.ops) + len(view.graph.tensors)
    dot_time, dot = timed(lambda: to_dot(live(y).graph, values=view.values,
                                         input_names=view.input_names), rounds)

    def layout():
        to_svg.cache_clear()
        return to_svg(dot)

    layout_time, svg = timed(layout, rounds)
    to_svg.cache_clear()
    t = time.perf_counter()
    stepper = BackwardStepper(build())
    build_time = time.perf_counter() - t

    n = len(stepper.replay)
    cid = stepper.picture.container_id
    restyles, sizes, steps = [], [], []
    for k in range(n + 1):
        t = time.perf_counter()
        css = stepper.styler.css(cid, k)
        restyles.append(time.perf_counter() - t)
        sizes.append(len(css))
    for k in list(range(1, n + 1)) + list(range(n - 1, -1, -1)):  # forward, then back
        t = time.perf_counter()
        stepper.step = k
        steps.append(time.perf_counter() - t)
    return dict(name=name, nodes=nodes, dot=dot_time, layout=layout_time, svg=len(svg),
                build=build_time, restyle=restyles, css=sizes, step=steps)


def full_layout(y, timeout: float) -> str:
    """Seconds for to_dot + Graphviz on the whole graph, or '>timeout'."""
    from widgets.svg import LayoutTimeout

    view = live(y)
    t = time.perf_counter()
    try:
        to_svg(to_dot(view.graph, values=view.values, input_names=view.input_names),
               timeout=timeout)
    except LayoutTimeout:
        return f">{timeout:g}"
    return f"{time.perf_counter() - t:.2f}"


def what_is_drawn(view) -> str:
    pages = getattr(view, "pages", None)
    if pages is not None:
        return f"pages of {pages.size} ops" if pages.paged else "whole"
    plan = view.plan
    if plan.ops is not None:
        return f"{sum(b - a for a, b in plan.ops)} first/last ops"
    return f"{len(plan.collapse)} boxes" if plan.collapse else "whole"


def scale(sizes, full: bool, full_timeout: float) -> None:
    import random

    from autograd_core.tools.graph import capture
    from bench.graph_shapes import SHAPES
    from widgets import BackwardStepper, ForwardTracer, GraphView
    from widgets.render import layout_estimate

    print(f"{'shape':>12} {'nodes':>6} {'predicted s':>11} {'full layout s':>13} | "
          f"{'GraphView s':>11} {'drawn':>18} | {'Stepper s':>9} {'drawn':>16} | "
          f"{'step ms med/max':>15} {'jump ms med/max':>15} | {'Tracer s':>8}")
    for name, shape in SHAPES.items():
        for size in sizes:
            y = shape(size)
            g = capture(y)
            nodes = len(g.ops) + len(g.tensors)
            predicted = layout_estimate(g).seconds
            full_s = full_layout(y, full_timeout) if full else "-"
            row = [f"{name:>12} {nodes:6d} {predicted:11.2f} {full_s:>13} |"]
            for cls in (GraphView, BackwardStepper, ForwardTracer):
                y = shape(size)
                to_svg.cache_clear()
                t = time.perf_counter()
                view = cls(y)
                built = time.perf_counter() - t
                if cls is ForwardTracer:
                    row.append(f"{built:8.2f}")
                else:
                    row.append(f"{built:11.2f} {what_is_drawn(view):>18} |" if cls is GraphView
                               else f"{built:9.2f} {what_is_drawn(view):>16} |")
                if cls is BackwardStepper:
                    walk, jumps = [], []
                    for k in range(1, min(len(view.replay), 500) + 1):
                        t = time.perf_counter()
                        view.step = k
                        walk.append(time.perf_counter() - t)
                    rng = random.Random(0)
                    for k in rng.sample(range(len(view.replay) + 1),
                                        min(30, len(view.replay))):
                        t = time.perf_counter()
                        view.step = k
                        jumps.append(time.perf_counter() - t)
                    row.append(f"{ms(statistics.median(walk))}/{ms(max(walk)).strip():<6}"
                               f"{ms(statistics.median(jumps))}/{ms(max(jumps)).strip():<6}|")
                view.close()
            print(" ".join(row), flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="layout rounds (median)")
    parser.add_argument("--long-edges", action="store_true",
                        help="also the ~1150-node shared-weight graph (about 10 s to lay out)")
    parser.add_argument("--scale", action="store_true",
                        help="the three shapes up to 10,000 nodes: layout and view times")
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 3000, 10000])
    parser.add_argument("--no-full", action="store_true",
                        help="with --scale: skip laying out each whole graph")
    parser.add_argument("--full-timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    if args.scale:
        scale(args.sizes, not args.no_full, args.full_timeout)
        return
    cases = [("mlp", 6), ("mlp", 25), ("mlp", 125), ("shared weight", 60)]
    if args.long_edges:
        cases.append(("shared weight", 166))
    print(f"{'graph':>16} {'nodes':>6} {'DOT ms':>8} {'layout ms':>9} {'SVG KB':>7} "
          f"{'stepper ms':>10} | {'restyle ms med/max':>18} {'CSS B med/max':>14} | "
          f"{'step ms med/max':>16}")
    for kind, size in cases:
        build = (lambda s=size: mlp(s)) if kind == "mlp" else (lambda s=size: shared_weight(s))
        r = measure(kind, build, args.rounds)
        print(f"{r['name']:>16} {r['nodes']:6d} {ms(r['dot'])} {ms(r['layout']):>9} "
              f"{r['svg'] / 1024:7.0f} {ms(r['build']):>10} | "
              f"{ms(statistics.median(r['restyle']), 2)}/{ms(max(r['restyle']), 2).strip():<9}"
              f"{statistics.median(r['css']):6.0f}/{max(r['css']):<7d} | "
              f"{ms(statistics.median(r['step']))}/{ms(max(r['step'])).strip()}")


if __name__ == "__main__":
    main()
