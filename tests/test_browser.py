"""The stepper in a real browser: JupyterLab + headless Chromium driven by Playwright.

JupyterLab serves a temporary copy of tests/browser/stepper.ipynb on 127.0.0.1 (a
free port, a token, autosave off, settings and workspaces in a temporary folder).
Chromium (Debian's /usr/bin/chromium; never ``playwright install``) opens it, runs
every cell, clicks the stepper's **next** button several times and checks, from the
styles the browser actually computed, that the highlighted node moves and that the
upstream gradient shown changes. A screenshot is kept in artifacts/.

Skipped, with the reason, when chromium, Playwright or JupyterLab is missing.
"""

from __future__ import annotations

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
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "tests" / "browser" / "stepper.ipynb"
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
CURRENT_STROKE = "rgb(214, 51, 132)"  # theme.CURRENT, #d63384, as the browser reports it

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=(
        "Debian's chromium is not installed (/usr/bin/chromium): `apt-get install chromium` "
        "to run the browser test (CI does)")),
]
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="the Python package playwright is not installed")
pytest.importorskip("jupyterlab", reason="JupyterLab is not installed")

# JupyterLab user settings: no autosave (we serve a copy anyway), no news pop-up.
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(folder: Path, port: int, token: str) -> subprocess.Popen:
    settings = folder / "settings"
    for name, values in SETTINGS.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = dict(os.environ,
               JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(folder / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(folder / "runtime"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                        os.environ.get("PYTHONPATH")])))
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
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # a kernel left behind, if any
    except (ProcessLookupError, PermissionError):
        pass


def wait_idle(page) -> None:
    """The status bar says '| Idle' once the kernel has finished (the kernel indicator
    alone reports idle too early)."""
    page.wait_for_function(
        "() => { const bar = document.querySelector('#jp-main-statusbar');"
        " return bar && /\\|\\s*Idle/.test(bar.innerText); }", timeout=90_000)


def menu(page, top: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{top}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{item}$")).first.click()


# Which op node is drawn with the "current" stroke, read from computed styles, and the
# text of the upstream gradient in the step panel.
READ_STATE = """() => {
  const graph = document.querySelector('.ag-graph');
  const current = [...graph.querySelectorAll('g.node.op')].filter(g => {
      const shape = g.querySelector('ellipse, polygon, path');
      return shape && getComputedStyle(shape).stroke === 'STROKE'; }).map(g => g.id);
  const panel = [...document.querySelectorAll('.widget-html-content')]
      .find(e => e.innerText.includes('upstream gradient'));
  const label = [...document.querySelectorAll('.widget-label')]
      .map(e => e.innerText).find(t => / \\/ /.test(t));
  return {current, upstream: panel ? panel.querySelector('pre').innerText : null, label};
}""".replace("STROKE", CURRENT_STROKE)


def poll(page, done, timeout: float = 30.0) -> dict:
    """Read the page state until ``done(state)`` (a click goes to the kernel and back)."""
    deadline = time.monotonic() + timeout
    while True:
        state = page.evaluate(READ_STATE)
        if done(state) or time.monotonic() > deadline:
            return state
        page.wait_for_timeout(50)


def test_stepper_next_moves_the_highlight_and_the_gradient(tmp_path):
    lab = tmp_path / "lab"
    lab.mkdir()
    shutil.copy(NOTEBOOK, lab / NOTEBOOK.name)
    port, token = free_port(), secrets.token_hex(16)
    proc = start_lab(tmp_path, port, token)
    try:
        wait_until_serving(proc, port, token, tmp_path / "jupyterlab.log")
        with sync_api.sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM),
                args=CHROMIUM_ARGS, headless=True, viewport={"width": 1500, "height": 1100})
            try:
                page = context.new_page()
                page.goto(f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK.name}?token={token}")
                page.wait_for_selector(".jp-Notebook", timeout=90_000)
                wait_idle(page)
                menu(page, "Edit", "Clear Outputs of All Cells")
                menu(page, "Run", "Run All Cells")
                next_button = page.get_by_role("button", name="next ▶")
                next_button.wait_for(timeout=90_000)
                wait_idle(page)

                states = [page.evaluate(READ_STATE)]
                n = int(states[0]["label"].split("/")[1])
                assert states[0]["label"] == f"0 / {n}" and states[0]["current"] == []
                for k in range(1, 5):
                    next_button.click()
                    # The label, the highlight and the step panel are separate widget
                    # messages: wait for all three to show step k.
                    states.append(poll(page, lambda s, k=k: s["label"] == f"{k} / {n}"
                                       and s["current"] != states[-1]["current"]
                                       and s["upstream"] is not None))
                page.locator(".ag-graph").scroll_into_view_if_needed()
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "browser_stepper.png"), full_page=True)
            finally:
                context.close()
    finally:
        stop(proc)

    currents = [s["current"] for s in states[1:]]
    assert all(len(c) == 1 for c in currents), currents  # exactly one op highlighted
    assert len({c[0] for c in currents}) == len(currents)  # a different one each step
    upstream = [s["upstream"] for s in states[1:]]
    assert all(upstream) and len(set(upstream)) > 1, upstream
