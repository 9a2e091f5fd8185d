"""A JupyterLab served on loopback and a headless Chromium page on it, for the
browser tests.

:func:`lab_page` serves a temporary copy of one notebook (a free port on
127.0.0.1, a token, autosave off, settings and workspaces in a temporary folder),
opens it in Debian's ``/usr/bin/chromium`` through Playwright (never ``playwright
install``), runs every cell, and yields the page; on leaving it closes the browser
and stops the server and the kernels it started.

``SKIPS`` are the marks a browser test module carries: it is skipped, saying what is
missing and how to get it, when chromium, Playwright or JupyterLab is not installed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

SKIPS = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=(
        "Debian's chromium is not installed (/usr/bin/chromium): `apt-get install chromium` "
        "to run the browser tests (CI does)")),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason=(
        "the Python package playwright is not installed: install it with "
        "pip install -e '.[test]'")),
    pytest.mark.skipif(not shutil.which("jupyter-lab") and not (
        Path(sys.executable).parent / "jupyter-lab").exists(), reason=(
        "JupyterLab is not installed: install it with pip install -e '.[lessons]'")),
]

# Every text of every widget output that holds a canvas, outside the picture (a light
# card in both themes; the inspector panel over it is in the theme's colours, so it
# counts), with its colour's contrast against the first opaque background
# behind it: {widgets, texts, low: [[text, ratio] under 4.5:1]}. Swatches (a lone "■")
# are colour keys, not text, and are left out.
CONTRAST = """() => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const background = el => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const outputs = [...document.querySelectorAll('.ag-canvas')]
      .map(c => c.closest('.jp-OutputArea-output'));
  const low = [];
  let texts = 0;
  for (const root of outputs) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node; (node = walker.nextNode());) {
      const text = node.textContent.trim();
      const el = node.parentElement;
      if (!text || text === '■' || !el.offsetParent) continue;
      if (el.closest('.ag-canvas-view') && !el.closest('.ag-canvas-detail')) continue;
      texts += 1;
      const a = lum(rgb(getComputedStyle(el).color)), b = lum(background(el));
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      if (ratio < 4.5) low.push([text.slice(0, 40), ratio.toFixed(2)]);
    }
  }
  return {widgets: outputs.length, texts, low};
}"""

THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


def _settings(theme: str) -> dict:
    """JupyterLab user settings: no autosave (we serve a copy anyway), no news, a theme,
    and every cell rendered (not only those scrolled into view), so a test sees them all."""
    return {
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false", "checkForUpdates": False},
        "@jupyterlab/apputils-extension/themes.jupyterlab-settings": {
            "theme": THEMES[theme]},
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
            "windowingMode": "none"},
    }


def lab_env(folder: Path) -> dict:
    """The environment of the served JupyterLab: its settings, workspaces, runtime files
    and notebook signatures (trust) all under ``folder``, the project importable."""
    return dict(os.environ,
                JUPYTERLAB_SETTINGS_DIR=str(folder / "settings"),
                JUPYTERLAB_WORKSPACES_DIR=str(folder / "workspaces"),
                JUPYTER_RUNTIME_DIR=str(folder / "runtime"),
                JUPYTER_DATA_DIR=str(folder / "data"),
                PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                         os.environ.get("PYTHONPATH")])))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_settings(folder: Path, theme: str) -> None:
    """JupyterLab's user settings under ``folder``: the server reads them afresh for
    every page it serves, so the next page opens in ``theme``."""
    for name, values in _settings(theme).items():
        path = folder / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def start_lab(folder: Path, port: int, token: str, theme: str = "light") -> subprocess.Popen:
    """JupyterLab on 127.0.0.1:``port`` serving ``folder/lab``, in its own session."""
    write_settings(folder, theme)
    env = lab_env(folder)
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip", "127.0.0.1",
               "--port", str(port), f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={folder / 'lab'}", "--ServerApp.port_retries=0"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    log = open(folder / "jupyterlab.log", "wb")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def wait_until_serving(proc: subprocess.Popen, port: int, token: str, log: Path) -> None:
    url = f"http://127.0.0.1:{port}/api/status?token={token}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer within 90 s:\n{log.read_text()[-3000:]}")


def stop(proc: subprocess.Popen) -> None:
    """Stop the server we started (and the kernels it started, in its session)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # a kernel left behind, if any


def wait_idle(page, log: Path | None = None, timeout: float = 180_000) -> None:
    """The status bar says '| Idle' once the kernel has finished (the kernel indicator
    alone reports idle too early). A kernel's first start on a busy 2-core machine can
    take a while; if it never comes, the failure shows the status bar and the end of
    JupyterLab's log (``log``), which say why."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            "() => { const bar = document.querySelector('#jp-main-statusbar');"
            " return bar && /\\|\\s*Idle/.test(bar.innerText); }", timeout=timeout)
    except PlaywrightTimeout:
        bar = page.evaluate("() => document.querySelector('#jp-main-statusbar')?.innerText")
        tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
        pytest.fail(f"the kernel did not become idle in {timeout / 1000:.0f} s; status bar: "
                    f"{bar!r}\nJupyterLab's log ends:\n{tail}")


def menu(page, top: str, item: str, timeout: float = 90_000) -> None:
    """Click ``item`` in the menu bar's ``top`` menu (each click waits up to
    ``timeout`` ms for its target)."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{top}$")).click(
        timeout=timeout)
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{item}$")).first.click(
        timeout=timeout)


def switch_theme(page, theme: str) -> None:
    """Settings > Theme > the theme (``"light"`` or ``"dark"``), on a page already open,
    and wait until the page shows it."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Settings$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Theme$")).first.hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{THEMES[theme]}$")).first.click()
    page.wait_for_function("name => document.body.dataset.jpThemeName === name",
                           arg=THEMES[theme])


# Some code cell's prompt shows that it ran or is queued: "[3]:" or "[*]:".
_RUN_STARTED = ("() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
                ".some(p => /\\[(\\*|\\d+)\\]/.test(p.innerText))")
# The kernel is idle and no cell the page shows is still queued or running.
_RUN_DONE = ("() => { const bar = document.querySelector('#jp-main-statusbar');"
             " return bar && /\\|\\s*Idle/.test(bar.innerText) &&"
             " ![...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
             ".some(p => /\\[\\*\\]/.test(p.innerText)); }")


RUN_TIMEOUT = 180_000  # ms a Run All Cells may take once it has started


class RunStalled(AssertionError):
    """Run All Cells started but did not finish in time; the message says what the page
    and JupyterLab's log showed."""


# What the page shows of a run that does not finish: the status bar and the prompts.
_RUN_STATE = ("() => ({bar: document.querySelector('#jp-main-statusbar')?.innerText,"
              " prompts: [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
              ".map(p => p.innerText.trim())})")


def run_all_cells(page, tries: int = 3, log: Path | None = None) -> None:
    """Run > Run All Cells, then wait until every cell has run. A busy machine can drop
    the menu click, and the status bar can say Idle before the first cell starts: so
    the run must be seen to start (a prompt turns to [*] or a number), and the click is
    repeated, up to ``tries`` times, when it is not. A run that starts and does not end
    in 180 s raises :class:`RunStalled` with the status bar, the prompts, the end of
    JupyterLab's log (``log``) and a screenshot in ``artifacts/``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(tries):
        try:
            menu(page, "Run", "Run All Cells", timeout=20_000)
            page.wait_for_function(_RUN_STARTED, timeout=30_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")  # close a menu left open by a dropped click
    else:
        raise AssertionError(f"Run All Cells did not start the kernel in {tries} tries")
    try:
        page.wait_for_function(_RUN_DONE, timeout=RUN_TIMEOUT)
    except PlaywrightTimeout:
        ARTIFACTS.mkdir(exist_ok=True)
        shot = ARTIFACTS / f"run_stalled_{int(time.time())}.png"
        page.screenshot(path=str(shot))
        tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
        raise RunStalled(f"Run All Cells did not finish in {RUN_TIMEOUT / 1000:.0f} s; the "
                         f"page showed {page.evaluate(_RUN_STATE)} (screenshot {shot.name}); "
                         f"JupyterLab's log ends:\n{tail}") from None


def steady_box(locator, timeout: float = 30.0) -> dict:
    """The element's bounding box once it has stopped moving (the canvas may still be
    panning to the current op): two reads 100 ms apart agree, or ``timeout`` passed."""
    deadline = time.monotonic() + timeout
    box = locator.bounding_box()
    while time.monotonic() < deadline:
        locator.page.wait_for_timeout(100)
        again = locator.bounding_box()
        if again == box:
            return box
        box = again
    return box


def poll(page, read: str, done, timeout: float = 90.0):
    """Evaluate ``read`` in the page until ``done(value)`` (a click goes to the kernel
    and back) or ``timeout`` seconds; returns the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(read)
        if done(value) or time.monotonic() > deadline:
            return value
        page.wait_for_timeout(50)


class SharedLab:
    """One JupyterLab and one Chromium for every browser test of a pytest process: each
    costs seconds to start, so the tests share them (conftest.py keeps every browser
    test in one worker, one after another). Each page gets a fresh copy of its notebook
    in a folder of its own, a workspace of its own and its own theme, and its kernel is
    shut down when the page closes."""

    def __init__(self, folder: Path):
        from playwright import sync_api

        self.folder = folder
        (folder / "lab").mkdir(parents=True)
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.proc = start_lab(folder, self.port, self.token)
        self.pages = 0
        try:
            wait_until_serving(self.proc, self.port, self.token, folder / "jupyterlab.log")
            self.playwright = sync_api.sync_playwright().start()
            self.context = self.playwright.chromium.launch_persistent_context(
                str(folder / "chromium-profile"), executable_path=str(CHROMIUM),
                args=CHROMIUM_ARGS, headless=True)
        except BaseException:
            stop(self.proc)
            raise

    def close(self) -> None:
        try:
            self.context.close()
            self.playwright.stop()
        finally:
            stop(self.proc)

    def api(self, method: str, path: str) -> object:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", method=method,
            headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shut_down_kernels(self, folder: str) -> None:
        """End the sessions (and kernels) of the notebooks under ``folder``."""
        for session in self.api("GET", "/api/sessions"):
            if session["path"].startswith(f"{folder}/"):
                self.api("DELETE", f"/api/sessions/{session['id']}")

    def _restart(self, page, folder: str, log: Path, why: str) -> None:
        """Restart the kernels of the notebooks under ``folder`` and reload the page, with
        a warning that says ``why`` (what the page showed), so it is in the report."""
        warnings.warn(f"restarted the kernel and reloaded the page: {why}", stacklevel=3)
        for session in self.api("GET", "/api/sessions"):
            if session["path"].startswith(f"{folder}/"):
                self.api("POST", f"/api/kernels/{session['kernel']['id']}/restart")
        page.reload()
        page.wait_for_selector(".jp-Notebook")

    def _settle(self, page, folder: str, log: Path) -> None:
        """Wait until the new page's kernel is idle. On Python 3.10 the page's kernel
        twice stayed 'Unknown' in the status bar for 180 s after JupyterLab connected to
        it (in five runs of the browser phase there, none on 3.11 or 3.13); such a page
        gets one kernel restart and reload before the test fails."""
        try:
            wait_idle(page, log, timeout=90_000)
        except pytest.fail.Exception as stuck:
            self._restart(page, folder, log, str(stuck).split(chr(10))[0])
            wait_idle(page, log)

    def _run_all(self, page, folder: str, log: Path) -> None:
        """Clear the outputs and run every cell. A run that stalls (seen once, on Python
        3.10: Run All started, and 180 s later the page was still not idle) is run once
        more, after its kernel is restarted and the page reloaded (``_restart``); a
        second stall fails the test."""
        try:
            menu(page, "Edit", "Clear Outputs of All Cells")
            run_all_cells(page, log=log)
        except RunStalled as stalled:
            self._restart(page, folder, log, f"Run All stalled: {stalled}")
            wait_idle(page, log)
            menu(page, "Edit", "Clear Outputs of All Cells")
            run_all_cells(page, log=log)

    @contextlib.contextmanager
    def page(self, notebook: Path, *, width: int, height: int, theme: str, run_all: bool,
             trust: bool) -> Iterator:
        self.pages += 1
        name = f"page{self.pages}"
        (self.folder / "lab" / name).mkdir()
        copy = self.folder / "lab" / name / notebook.name
        shutil.copy(notebook, copy)
        if trust:
            subprocess.run([sys.executable, "-m", "jupyter", "trust", str(copy)],
                           env=lab_env(self.folder), check=True, capture_output=True)
        write_settings(self.folder, theme)
        page = self.context.new_page()
        try:
            page.set_default_timeout(90_000)  # a busy 2-core machine runs the kernel too
            page.set_viewport_size({"width": width, "height": height})
            page.goto(f"http://127.0.0.1:{self.port}/lab/workspaces/{name}/tree/{name}/"
                      f"{notebook.name}?token={self.token}")
            page.wait_for_selector(".jp-Notebook")
            # the settings just written chose the theme: make sure this page shows it
            page.wait_for_function(
                "name => document.body.dataset.jpThemeName === name", arg=THEMES[theme])
            log = self.folder / "jupyterlab.log"
            self._settle(page, name, log)
            if run_all:
                self._run_all(page, name, log)
            yield page
        finally:
            page.close()
            self.shut_down_kernels(name)


_SHARED: SharedLab | None = None


def _FOLDER() -> Path:  # noqa: N802 - replaced by share_lab_in
    return Path(tempfile.mkdtemp(prefix="shared-lab-"))


def share_lab_in(folder_factory: Callable[[], Path]) -> None:
    """Where the shared lab will live once a test first asks for a page (tests/browser's
    conftest.py points it at pytest's temporary folders)."""
    global _FOLDER
    _FOLDER = folder_factory


def close_shared_lab() -> None:
    """Stop the shared JupyterLab and Chromium, if they were started."""
    global _SHARED
    if _SHARED is not None:
        lab, _SHARED = _SHARED, None
        lab.close()


@contextlib.contextmanager
def lab_page(tmp_path: Path, notebook: Path, *, width: int = 1500, height: int = 1100,
             theme: str = "light", run_all: bool = True, trust: bool = False) -> Iterator:
    """A Chromium page on a served copy of ``notebook``, kernel idle; with ``run_all``
    (the default) after clearing the outputs and running every cell, else as stored.
    ``trust``: run ``jupyter trust`` on the copy first, as the README's command does.
    The server and the browser are the process's shared ones (:class:`SharedLab`),
    started on the first call; ``tmp_path`` is the test's own folder, kept for what the
    test writes itself."""
    global _SHARED
    if _SHARED is None:
        _SHARED = SharedLab(_FOLDER())
    with _SHARED.page(notebook, width=width, height=height, theme=theme, run_all=run_all,
                      trust=trust) as page:
        yield page


@contextlib.contextmanager
def browser_page(*, width: int, height: int, color_scheme: str = "light") -> Iterator:
    """A plain page of the process's shared Chromium (:class:`SharedLab`; Playwright's sync
    API allows one per process), for a page that is not a notebook (the class report),
    with ``prefers-color-scheme`` set to ``color_scheme``."""
    global _SHARED
    if _SHARED is None:
        _SHARED = SharedLab(_FOLDER())
    page = _SHARED.context.new_page()
    try:
        page.set_viewport_size({"width": width, "height": height})
        page.emulate_media(color_scheme=color_scheme)
        yield page
    finally:
        page.close()
