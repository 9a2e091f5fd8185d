"""Re-execute lessons in place so their stored outputs are current, with clean diffs.

Instructors run this after editing a lesson; CI then checks (``pytest --nbval``)
that a fresh run still gives exactly these outputs. What would churn the diff is
left out: execution timings, widget state and live-widget views (a reader sees each
widget's static picture instead), and the kernel's own metadata.

    python scripts/regenerate_notebooks.py                  # every lesson
    python scripts/regenerate_notebooks.py notebooks/03_*.ipynb
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def coalesce_streams(outputs: list) -> list:
    """Join consecutive stdout (or stderr) chunks: how a print is split into messages
    depends on timing, and would otherwise churn the stored outputs."""
    merged: list = []
    for out in outputs:
        last = merged[-1] if merged else None
        if (out.output_type == "stream" and last is not None
                and last.output_type == "stream" and last.name == out.name):
            last.text += out.text
        else:
            merged.append(out)
    return merged


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# Marks a notebook as a lesson for the project's JupyterLab extension
# (widgets/labextension): opened on another Python, it stays unmodified until changed.
LESSON_MARK = "autograd_lessons"


def without_widget_views(outputs: list) -> list:
    """Drop the live-widget part of each output: widget state is not stored, so a reader
    would see "Error displaying widget: model not found" where the bundle's static
    picture (SVG or PNG, see ``widgets.controls.with_static_picture``) can show."""
    for out in outputs:
        if out.get("output_type") in ("display_data", "execute_result"):
            out.get("data", {}).pop(WIDGET_VIEW, None)
    return outputs


def kernelspec(name: str = "python3") -> dict:
    """The kernelspec JupyterLab writes when it opens a notebook with this kernel: storing
    exactly that keeps a freshly opened lesson from being marked modified."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(name)
    return {"display_name": spec.display_name, "language": spec.language, "name": name}


def regenerate(path: Path, timeout: int = 600) -> float:
    """Execute one notebook in place; returns the seconds it took."""
    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    # Exercise progress in memory: the stored lesson shows a fresh start, whatever the
    # progress file of the person regenerating it says (the kernel inherits this).
    os.environ["AUTOGRAD_LESSONS_PROGRESS"] = ":memory:"
    os.environ.pop("AUTOGRAD_LESSONS_LEARNER", None)  # and the shared problems, not yours
    started = time.perf_counter()
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}},
                            record_timing=False, store_widget_state=False)
    client.execute()
    elapsed = time.perf_counter() - started
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = without_widget_views(coalesce_streams(cell.outputs))
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = kernelspec()
    nb.metadata[LESSON_MARK] = {"lesson": path.stem}
    nbformat.write(nb, path)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to regenerate (default: notebooks/*.ipynb)")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    for path in paths:
        print(f"{path.name}: {regenerate(path):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
