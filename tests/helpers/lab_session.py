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
import time
import urllib.request
from collections.abc import Iterator
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
# card in both themes), with its colour's contrast against the first opaque background
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
      if (!text || text === '■' || el.closest('.ag-canvas-view') || !el.offsetParent) continue;
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


def start_lab(folder: Path, port: int, token: str, theme: str = "light") -> subprocess.Popen:
    """JupyterLab on 127.0.0.1:``port`` serving ``folder/lab``, in its own session."""
    settings = folder / "settings"
    for name, values in _settings(theme).items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
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


def wait_idle(page) -> None:
    """The status bar says '| Idle' once the kernel has finished (the kernel indicator
    alone reports idle too early)."""
    page.wait_for_function(
        "() => { const bar = document.querySelector('#jp-main-statusbar');"
        " return bar && /\\|\\s*Idle/.test(bar.innerText); }", timeout=90_000)


def menu(page, top: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{top}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{item}$")).first.click()


def poll(page, read: str, done, timeout: float = 30.0):
    """Evaluate ``read`` in the page until ``done(value)`` (a click goes to the kernel
    and back) or ``timeout`` seconds; returns the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(read)
        if done(value) or time.monotonic() > deadline:
            return value
        page.wait_for_timeout(50)


@contextlib.contextmanager
def lab_page(tmp_path: Path, notebook: Path, *, width: int = 1500, height: int = 1100,
             theme: str = "light", run_all: bool = True, trust: bool = False) -> Iterator:
    """A Chromium page on a served copy of ``notebook``, kernel idle; with ``run_all``
    (the default) after clearing the outputs and running every cell, else as stored.
    ``trust``: run ``jupyter trust`` on the copy first, as the README's command does."""
    from playwright import sync_api

    lab = tmp_path / "lab"
    lab.mkdir()
    shutil.copy(notebook, lab / notebook.name)
    if trust:
        subprocess.run([sys.executable, "-m", "jupyter", "trust", str(lab / notebook.name)],
                       env=lab_env(tmp_path), check=True, capture_output=True)
    port, token = free_port(), secrets.token_hex(16)
    proc = start_lab(tmp_path, port, token, theme)
    try:
        wait_until_serving(proc, port, token, tmp_path / "jupyterlab.log")
        with sync_api.sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM),
                args=CHROMIUM_ARGS, headless=True,
                viewport={"width": width, "height": height})
            try:
                page = context.new_page()
                page.goto(f"http://127.0.0.1:{port}/lab/tree/{notebook.name}?token={token}")
                page.wait_for_selector(".jp-Notebook", timeout=90_000)
                wait_idle(page)
                if run_all:
                    menu(page, "Edit", "Clear Outputs of All Cells")
                    menu(page, "Run", "Run All Cells")
                    wait_idle(page)
                yield page
            finally:
                context.close()
    finally:
        stop(proc)
