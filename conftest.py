"""Test setup for the whole repository: the tests under ``tests/`` and nbval's run of
the lessons in ``notebooks/`` (so it also applies to ``pytest notebooks/05_*.ipynb``).

* Lessons' exercise progress is kept in memory: nbval's kernels inherit the variable,
  so every run starts from a fresh lesson and no learner's progress file is read or
  written. A learner name set in the environment is dropped, so the lessons draw the
  shared problems their stored outputs show.
* ``tests/helpers`` (strategies, the op table, reference layers, the served JupyterLab)
  is importable from every test folder.
* On several cores (pytest-xdist, ``-n auto --dist loadscope``): a notebook's cells are
  one unit of work, so they run in order in one worker and one kernel; the browser tests
  are another, so one worker serves one JupyterLab and one Chromium for all of them;
  every other test goes wherever a core is free (:func:`scope_of`).
* BLAS runs on one thread in every test process and in every kernel and subprocess they
  start (``OPENBLAS_NUM_THREADS=1`` and its kin, unless already set): the workers already
  fill every core, and OpenBLAS's default of a thread per core in each of them made the
  attention tests and lesson 15's training two to four times slower on 2 cores.
* Collected objects are frozen out of the garbage collector's passes (``gc.freeze``).
* A lesson's kernel that dies before it ever answers is started once more, with a warning
  quoting its stderr (``tests/helpers/nbval_kernel.py``).
* Three phases of CI run only when asked (together about seven minutes on 2 cores, where
  the everyday run takes under two):
  - the second run of every lesson, on other CPU kernels
    (``tests/lessons/test_lessons_rerun.py``, marked ``rerun``): ``pytest -m rerun``;
  - the course end to end: ``otter run`` grading exported lessons, the grading attacks and
    their controls (marked ``course``; each ``otter run`` starts otter, a kernel that runs
    the lesson and a process that grades again, about 13 s of a core, 21 of them), and a
    real JupyterHub (``tests/hub/``, marked ``hub``): ``pytest -m "course or hub"``;
  - JupyterLab in Chromium (``tests/browser/``, marked ``browser`` here, about 3.5
    minutes on the one worker that serves them): ``pytest -m browser``.
* Tests of one file under ``tests/course/`` or ``tests/hub/`` share a worker, so the
  exports and grading their module fixtures make happen once, not once per worker.
"""

import gc
import os
import sys
from pathlib import Path

import pytest

# One BLAS thread per process (see the docstring). The variables reach every kernel and
# subprocess; threadpoolctl limits a BLAS this process loaded before reading them.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
for variable in BLAS_THREADS:
    os.environ.setdefault(variable, "1")
try:
    from threadpoolctl import threadpool_limits
except ImportError:  # not a test install: the variables above still reach subprocesses
    pass
else:
    threadpool_limits(int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")

os.environ["AUTOGRAD_LESSONS_PROGRESS"] = ":memory:"
os.environ.pop("AUTOGRAD_LESSONS_LEARNER", None)  # stored lessons use the shared problems

HELPERS = str(Path(__file__).resolve().parent / "tests" / "helpers")
if HELPERS not in sys.path:
    sys.path.insert(0, HELPERS)

try:
    import nbval_kernel
except ImportError:  # nbval not installed: no lesson is validated
    pass
else:
    nbval_kernel.install()

BROWSER = "tests/browser/"
# Folders whose files each share a worker: their module fixtures export and grade once.
BY_FILE = ("tests/course/", "tests/hub/")


def scope_of(nodeid: str) -> str:
    """The work unit a test belongs to under pytest-xdist: a notebook (its cells in
    order, in one kernel), all the browser tests (one served JupyterLab and one Chromium
    for them all), a file of the course or hub tests (its module fixtures run once), or
    else the test alone, so the cores share the rest evenly."""
    path = nodeid.split("::", 1)[0]
    if path.endswith(".ipynb") or path.startswith(BY_FILE):
        return path
    if path.startswith(BROWSER):
        return BROWSER
    return nodeid


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # pytest-xdist not installed: everything runs in one process
    LoadScopeScheduling = None
else:
    class LessonScheduling(LoadScopeScheduling):
        """loadscope's scheduler with :func:`scope_of`'s work units."""

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(config, log):
        if config.getoption("dist") == "loadscope":
            return LessonScheduling(config, log)
        return None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move everything collection made (every test module, item and strategy) out of
    the cyclic garbage collector's sight: tests that call ``gc.collect()`` (to prove a
    graph or a view is freed) then pay for their own objects, not for the whole suite's."""
    gc.freeze()


# Markers of CI phases of their own: their tests run only when ``-m`` names them.
CI_PHASES = ("rerun", "course", "hub", "browser")


def pytest_itemcollected(item: pytest.Item) -> None:
    """Every test under ``tests/browser/`` is marked ``browser`` (before ``-m`` selects)."""
    if item.nodeid.startswith(BROWSER):
        item.add_marker(pytest.mark.browser)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the tests of a CI phase (``CI_PHASES``: the lessons' second run, the
    course end to end, the JupyterHub, the browser) unless ``-m`` names that phase."""
    markexpr = config.getoption("markexpr", "") or ""
    phases = [m for m in CI_PHASES if m not in markexpr]
    later = [item for item in items if any(item.get_closest_marker(m) for m in phases)]
    if later:
        config.hook.pytest_deselected(items=later)
        items[:] = [item for item in items if item not in later]
