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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="layout rounds (median)")
    parser.add_argument("--long-edges", action="store_true",
                        help="also the ~1150-node shared-weight graph (about 10 s to lay out)")
    args = parser.parse_args(argv)
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
