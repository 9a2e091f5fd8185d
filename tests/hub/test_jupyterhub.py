"""A class on a real JupyterHub, end to end (README: "A class on JupyterHub or Binder").

A JupyterHub (DummyAuthenticator, SimpleLocalProcessSpawner, the npm
configurable-http-proxy) runs in a fresh folder on 127.0.0.1, with two learners, ada and
grace, whose servers get ``AUTOGRAD_LESSONS_LEARNER={username}`` as a class's hub sets
it. Driven through the hub's REST API (an admin service's token) and, per learner,
through the proxy with the learner's own token, as a browser reaches it, the test proves:

* the class password lets a learner in, and neither a wrong password nor an outsider;
* each learner's kernel draws problems of their own (their ``G6.problem().A`` differ);
* each learner's progress is their own: ada answers G6 right and grace with B's gradient
  transposed; ``status("G6")`` says "solved" in ada's kernel and "in progress" in
  grace's, and on disk ada's home (``~/.autograd-lessons/``) holds her solve and not
  grace's named mistake, grace's home the reverse; a learner's token does not reach a
  classmate's server;
* the course workflow (README: "Running a course") works on the hub: lesson 05 exported
  for otter, its student notebook and tests/ put into ada's home through the contents
  API, worked cell by cell in ada's kernel (the exercise cells answered as in
  tests/data/course/05_matmul_mlp.toml), submitted with the notebook's own
  ``grader.export(pdf=False)``, downloaded, and graded by ``otter run`` with full marks;
  the lesson's checks are recorded in ada's home, none in grace's.

Needs Node.js and npm (the proxy comes from tests/hub/package-lock.json, installed with
``npm ci --prefix tests/hub`` when missing) and jupyterhub (the test extra). Without them
the test is skipped with a sentence saying what to install; with
``AUTOGRAD_LESSONS_REQUIRE_HUB=1`` (CI) it fails instead.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import datetime
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
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests  # both come with jupyterlab (the lessons extra)
import websocket  # websocket-client, the kernel's channels

from widgets.exercises import store
from widgets.exercises.tracking import LESSONS

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

pytestmark = [pytest.mark.hub, pytest.mark.skipif(
    os.name == "nt", reason="the hub's local spawner and this test's process groups are POSIX")]

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PROXY = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
VENV_BIN = Path(sys.executable).parent
LESSON = ROOT / "notebooks" / "05_matmul_mlp.ipynb"
ANSWERS = ROOT / "tests" / "data" / "course" / "05_matmul_mlp.toml"
USERS = ("ada", "grace")
REQUIRE = "AUTOGRAD_LESSONS_REQUIRE_HUB"
SERVICE = "class-admin"  # the hub service whose token drives the REST API
STARTUP_TIMEOUT = 60  # seconds for the hub to come up
SERVER_TIMEOUT = 120  # seconds for a learner's server or kernel to come up
CELL_TIMEOUT = 300  # seconds for one cell to run in a kernel


# -- what the test needs -----------------------------------------------------------------


def missing(sentence: str) -> None:
    """Skip with ``sentence``, or fail with it when the environment requires the hub (CI)."""
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{sentence} ({REQUIRE}=1 requires this test to run)", pytrace=False)
    pytest.skip(sentence)


def require_python_tools() -> None:
    """jupyterhub and its single-user server in this venv, and otter-grader."""
    commands = [VENV_BIN / "jupyterhub", VENV_BIN / "jupyterhub-singleuser"]
    if importlib.util.find_spec("jupyterhub") is None or not all(map(Path.exists, commands)):
        missing("jupyterhub is not installed in this venv, so the JupyterHub test cannot "
                "run: install it with pip install jupyterhub (the test extra includes it)")
    if importlib.util.find_spec("otter") is None:
        missing("otter-grader is not installed, so the JupyterHub test cannot grade a "
                "submission: install the test extra, pip install -e '.[test]'")


def proxy_command() -> Path:
    """configurable-http-proxy (run by Node.js), installed from tests/hub/package-lock.json
    if missing."""
    tools = [tool for tool in ("node", "npm")
             if shutil.which(tool) is None and (tool == "node" or not PROXY.exists())]
    if tools:
        missing(f"{' and '.join(tools)} not found, so JupyterHub's proxy "
                "(configurable-http-proxy) cannot be installed or run: install Node.js and "
                "npm (on Debian: apt-get install nodejs npm)")
    if PROXY.exists():
        return PROXY
    done = subprocess.run(["npm", "ci", "--prefix", str(HERE), "--no-audit", "--no-fund"],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not PROXY.exists():
        missing("npm ci --prefix tests/hub could not install configurable-http-proxy: "
                f"{(done.stderr or done.stdout).strip()[-500:]}")
    return PROXY


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports free on 127.0.0.1 right now."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]


# -- the hub -------------------------------------------------------------------------------


HUB_CONFIG = """\
# Written by tests/hub/test_jupyterhub.py: a class of two on one machine.
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {public_port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = "sqlite:///{folder}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/jupyterhub_cookie_secret"
c.JupyterHub.pid_file = "{folder}/jupyterhub.pid"
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every learner's server
c.ConfigurableHTTPProxy.should_start = False  # the test starts it, so it owns its PID
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.auth_token = "{proxy_token}"

c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = "{password}"
c.Authenticator.allowed_users = {users!r}

c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
c.SimpleLocalProcessSpawner.home_dir_template = "{folder}/home/{{username}}"
c.Spawner.cmd = ["{singleuser}"]
c.Spawner.args = {args!r}
c.Spawner.start_timeout = {timeout}
c.Spawner.http_timeout = {timeout}
c.JupyterHub.tornado_settings = {{"slow_spawn_timeout": 0}}  # POST .../server returns at once
# What a class's hub sets (Zero to JupyterHub: singleuser.extraEnv): problems per learner.
c.Spawner.environment = {{
    "AUTOGRAD_LESSONS_LEARNER": lambda spawner: spawner.format_string("{{username}}"),
}}

c.JupyterHub.services = [{{"name": "{service}", "api_token": "{admin_token}"}}]
c.JupyterHub.load_roles = [{{
    "name": "{service}",
    "scopes": ["admin:users", "admin:servers", "admin:server_state", "servers", "tokens",
               "access:servers"],
    "services": ["{service}"],
}}]
"""


def write_hub_config(folder: Path, ports: dict[str, int], secrets_: dict[str, str]) -> Path:
    """jupyterhub_config.py for a hub in ``folder``: db, cookie secret and homes inside it
    (``secrets_``: the proxy's and the admin service's tokens, the class password)."""
    args = ["--allow-root"] if os.geteuid() == 0 else []  # the server refuses root otherwise
    path = folder / "jupyterhub_config.py"
    path.write_text(HUB_CONFIG.format(
        folder=folder, users=set(USERS), args=args, timeout=SERVER_TIMEOUT,
        singleuser=VENV_BIN / "jupyterhub-singleuser", service=SERVICE, **ports, **secrets_))
    return path


def clean_environment(proxy_token: str = "") -> dict[str, str]:
    """This process's environment without the test run's own settings (the progress kept
    in memory, a learner name, pytest's variables): the hub's servers start as a class's."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AUTOGRAD_LESSONS_", "PYTEST_"))}
    if proxy_token:
        env["CONFIGPROXY_AUTH_TOKEN"] = proxy_token
    return env


def start_process(command: list, log: Path, env: dict[str, str], cwd: Path):
    """A process in a session of its own (so its whole group can be stopped), its output
    in ``log``."""
    with open(log, "ab") as out:
        return subprocess.Popen([str(c) for c in command], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                cwd=cwd, start_new_session=True)


def stop_process_group(process: subprocess.Popen, grace_seconds: float = 10) -> None:
    """SIGTERM to the group ``process`` leads, then SIGKILL if it is still there."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(grace_seconds)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def kill_if_still_running(pid: int, marker: str) -> None:
    """SIGKILL ``pid`` (and the group it leads) if it is alive and its command line still
    names ``marker`` (so a PID reused by the system is left alone)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return
    if marker not in cmdline:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)


@dataclass
class Hub:
    """A running JupyterHub and its proxy, reached at ``url`` (the proxy's public side)."""

    folder: Path
    url: str
    hub_url: str  # the hub's own port (the proxy sends /hub/ there)
    admin_token: str
    password: str
    processes: list = field(default_factory=list)  # the proxy and the hub, as started
    pids: dict[int, str] = field(default_factory=dict)  # servers and kernels: PID -> marker

    @property
    def log(self) -> Path:
        return self.folder / "hub.log"

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the hub's and the proxy's (and the servers') output."""
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def api(self, method: str, path: str, expect=(200, 201, 202, 204), **kwargs):
        """A hub REST API call with the admin service's token; fails with the hub's log."""
        response = requests.request(method, f"{self.url}/hub/api/{path}", timeout=30,
                                    headers={"Authorization": f"token {self.admin_token}"},
                                    **kwargs)
        assert response.status_code in expect, (
            f"{method} /hub/api/{path}: {response.status_code} {response.text[:500]}\n"
            f"{self.log_tail()}")
        return response.json() if response.content else None

    def home(self, user: str) -> Path:
        return self.folder / "home" / user

    def wait_until_up(self) -> None:
        """Poll /hub/api until the hub answers, first on its own port, then through the
        proxy (once the hub has added its route); HubDidNotStart if a process ends."""
        deadline = time.monotonic() + STARTUP_TIMEOUT
        for url in (f"{self.hub_url}/hub/api/", f"{self.url}/hub/api/"):
            while not self.answers(url):
                for process in self.processes:
                    if process.poll() is not None:
                        raise HubDidNotStart(f"{process.args[0]} exited with "
                                             f"{process.returncode}:\n{self.log_tail()}")
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterHub did not answer at {url} within "
                                f"{STARTUP_TIMEOUT} s:\n{self.log_tail()}")
                time.sleep(0.2)

    @staticmethod
    def answers(url: str) -> bool:
        try:
            return requests.get(url, timeout=5).status_code == 200
        except requests.RequestException:
            return False

    def log_in(self, user: str, password: str) -> int:
        """Log in on the hub's login form as a browser does; the status code (302: in)."""
        with requests.Session() as browser:
            browser.get(f"{self.url}/hub/login", timeout=30)
            return browser.post(f"{self.url}/hub/login", allow_redirects=False, timeout=30,
                                data={"username": user, "password": password,
                                      "_xsrf": browser.cookies.get("_xsrf", "")}).status_code

    def stop(self) -> None:
        """Stop the hub (which stops every learner's server) and the proxy; then SIGKILL
        any server or kernel still running."""
        for process in reversed(self.processes):  # the hub first, then the proxy
            stop_process_group(process)
        for pid, marker in self.pids.items():
            kill_if_still_running(pid, marker)


class HubDidNotStart(Exception):
    """The hub or the proxy exited while starting (the message holds their output)."""

    @property
    def port_taken(self) -> bool:
        return any(words in str(self) for words in ("EADDRINUSE", "Address already in use"))


def start_hub(folder: Path, proxy: Path) -> Hub:
    """The proxy and a hub configured for the class, started on free ports and answering
    (their processes are stopped again if the hub does not come up)."""
    hub_port, api_port, public_port = free_ports(3)
    secrets_ = {"proxy_token": secrets.token_hex(32), "admin_token": secrets.token_hex(32),
                "password": secrets.token_urlsafe(12)}
    config = write_hub_config(folder, {"hub_port": hub_port, "api_port": api_port,
                                       "public_port": public_port}, secrets_)
    running = Hub(folder, f"http://127.0.0.1:{public_port}", f"http://127.0.0.1:{hub_port}",
                  secrets_["admin_token"], secrets_["password"])
    try:
        running.processes.append(start_process(
            [proxy, "--ip", "127.0.0.1", "--port", public_port, "--api-ip", "127.0.0.1",
             "--api-port", api_port, "--error-target", f"{running.hub_url}/hub/error",
             "--log-level", "warn"],
            running.log, clean_environment(secrets_["proxy_token"]), folder))
        running.processes.append(start_process(
            [VENV_BIN / "jupyterhub", "-f", config], running.log, clean_environment(),
            folder))
        running.wait_until_up()
    except BaseException:
        running.stop()
        raise
    return running


@pytest.fixture
def hub(tmp_path):
    """A JupyterHub for ada and grace in ``tmp_path``; stopped at the end, pass or fail."""
    require_python_tools()
    proxy = proxy_command()
    for attempt in range(3):  # a port found free may be taken by another test meanwhile
        try:
            running = start_hub(tmp_path, proxy)
            break
        except HubDidNotStart as error:
            if not error.port_taken or attempt == 2:
                pytest.fail(str(error), pytrace=False)
    try:
        yield running
    finally:
        running.stop()


# -- a learner's server, seen through the proxy ------------------------------------------


@dataclass
class Learner:
    """One learner's single-user server, reached through the proxy with their own token."""

    hub: Hub
    name: str
    token: str = ""

    @property
    def url(self) -> str:
        return f"{self.hub.url}/user/{self.name}"

    def request(self, method: str, path: str, token: str | None = None, **kwargs):
        """An HTTP request to this learner's server (``path`` under /user/NAME/)."""
        return requests.request(method, f"{self.url}/{path}", timeout=60, headers={
            "Authorization": f"token {token or self.token}"}, **kwargs)

    def api(self, method: str, path: str, expect=(200, 201, 204), **kwargs):
        """A call of the server's REST API (``/user/NAME/api/...``)."""
        response = self.request(method, f"api/{path}", **kwargs)
        assert response.status_code in expect, (
            f"{self.name}: {method} api/{path}: {response.status_code} "
            f"{response.text[:500]}\n{self.hub.log_tail()}")
        return response.json() if response.content else None

    def start_server(self) -> None:
        """Ask the hub to start this learner's server (it may still be starting after)."""
        self.hub.api("POST", f"users/{self.name}/server", expect=(201, 202))
        self.token = self.hub.api("POST", f"users/{self.name}/tokens",
                                  json={"note": "tests/hub", "expires_in": 3600})["token"]

    def wait_until_ready(self) -> None:
        """Wait for the hub to call the server ready; remember its PID for the cleanup."""
        deadline = time.monotonic() + SERVER_TIMEOUT
        while time.monotonic() < deadline:
            server = self.hub.api("GET", f"users/{self.name}")["servers"].get("", {})
            pid = (server.get("state") or {}).get("pid")
            if pid:
                self.hub.pids[pid] = "jupyterhub-singleuser"
            if server.get("ready"):
                return
            assert server.get("pending") == "spawn", (
                f"{self.name}'s server is neither starting nor ready: {server}\n"
                f"{self.hub.log_tail()}")
            time.sleep(0.2)
        pytest.fail(f"{self.name}'s server was not ready within {SERVER_TIMEOUT} s:\n"
                    f"{self.hub.log_tail()}")

    def open_kernel(self, notebook: str | None = None) -> Kernel:
        """A new kernel: for ``notebook`` (a path in the home) as JupyterLab opens one, with
        a session whose kernel starts in the notebook's folder, or else a bare kernel."""
        if notebook:
            session = self.api("POST", "sessions", json={
                "path": notebook, "name": Path(notebook).name, "type": "notebook",
                "kernel": {"name": "python3"}})
            kernel_id = session["kernel"]["id"]
        else:
            kernel_id = self.api("POST", "kernels", json={"name": "python3"})["id"]
        kernel = Kernel(self, kernel_id)
        kernel.connect()
        self.hub.pids[int(kernel.run_code("import os; print(os.getpid())"))] = "ipykernel"
        return kernel

    def put_folder(self, path: str) -> None:
        self.api("PUT", f"contents/{path}", json={"type": "directory"})

    def put_file(self, path: str, text: str) -> None:
        """Write a text file (a notebook as JSON text is written as a notebook)."""
        if path.endswith(".ipynb"):
            body = {"type": "notebook", "format": "json", "content": json.loads(text)}
        else:
            body = {"type": "file", "format": "text", "content": text}
        self.api("PUT", f"contents/{path}", json=body)

    def list_folder(self, path: str) -> list[str]:
        return [entry["name"] for entry in self.api("GET", f"contents/{path}")["content"]]

    def get_file(self, path: str) -> bytes:
        """A file's bytes, downloaded as JupyterLab does (base64)."""
        model = self.api("GET", f"contents/{path}",
                         params={"type": "file", "format": "base64", "content": "1"})
        return base64.b64decode(model["content"])


class KernelError(AssertionError):
    """Code run in a learner's kernel raised: the error's name, value and traceback."""


ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Kernel:
    """A kernel of a learner's server, driven over its websocket (the Jupyter protocol)."""

    learner: Learner
    id: str
    session: str = field(default_factory=lambda: uuid.uuid4().hex)
    socket: object = None

    def connect(self) -> None:
        """Open the kernel's channels and wait until it answers a kernel_info_request."""
        url = (f"{self.learner.url.replace('http://', 'ws://', 1)}/api/kernels/{self.id}"
               f"/channels?session_id={self.session}")
        self.socket = websocket.create_connection(
            url, header=[f"Authorization: token {self.learner.token}"],
            timeout=SERVER_TIMEOUT)
        self.request("kernel_info_request", {}, timeout=SERVER_TIMEOUT)

    def send(self, msg_type: str, content: dict) -> str:
        msg_id = uuid.uuid4().hex
        self.socket.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": msg_type, "session": self.session,
                       "username": self.learner.name, "version": "5.3",
                       "date": datetime.datetime.now(datetime.timezone.utc).isoformat()},
            "parent_header": {}, "metadata": {}, "content": content, "channel": "shell",
            "buffers": []}))
        return msg_id

    def request(self, msg_type: str, content: dict, timeout: float = CELL_TIMEOUT):
        """Send a shell request; return its reply and the iopub messages it caused, once
        the reply has come and the kernel is idle again (so no output is missed)."""
        msg_id = self.send(msg_type, content)
        reply, outputs, idle = None, [], False
        deadline = time.monotonic() + timeout
        while reply is None or not idle:
            left = deadline - time.monotonic()
            assert left > 0, (f"{self.learner.name}'s kernel gave no {msg_type} reply in "
                              f"{timeout} s\n{self.learner.hub.log_tail()}")
            self.socket.settimeout(left)
            try:
                msg = json.loads(self.socket.recv())
            except websocket.WebSocketException as error:  # closed, or no message in time
                raise AssertionError(
                    f"{self.learner.name}'s kernel, waiting for the {msg_type} reply: "
                    f"{type(error).__name__} {error}\n{self.learner.hub.log_tail()}") from None
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["channel"] == "shell":
                reply = msg
            elif msg["channel"] == "iopub":
                if msg["msg_type"] == "status":
                    idle = msg["content"]["execution_state"] == "idle"
                else:
                    outputs.append(msg)
        return reply, outputs

    def run_code(self, code: str) -> str:
        """Run ``code`` as a cell; its stdout, or a KernelError if it raised."""
        reply, outputs = self.request("execute_request", {
            "code": code, "silent": False, "store_history": True, "user_expressions": {},
            "allow_stdin": False, "stop_on_error": True})
        content = reply["content"]
        if content["status"] != "ok":
            trace = ANSI.sub("", "\n".join(content.get("traceback", [])))
            raise KernelError(f"{self.learner.name}'s kernel: {content.get('ename')}: "
                              f"{content.get('evalue')}\n{trace[-3000:]}\n--- the cell:\n{code}")
        return "".join(m["content"]["text"] for m in outputs
                       if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()


# -- the lesson and the course --------------------------------------------------------------


G6_ANSWERS = {  # in each learner's kernel: p is that learner's own G6 problem
    "ada": "G6(lambda q: {'dA': q.G @ q.B.T, 'dB': q.A.T @ q.G})",  # right
    "grace": "G6(lambda q: {'dA': q.G @ q.B.T, 'dB': q.G.T @ q.A})",  # B's gradient transposed
}

G6_REPORT = """\
import json
from widgets.exercises import G6, store
from widgets.exercises.problems import learner_name
from widgets.exercises.tracking import status
p = G6.problem()
{answer}
print(json.dumps({{"learner": learner_name(), "status": status("G6"), "A": p.A.tolist(),
                  "store": str(store.location())}}))
"""


def last_line_json(output: str):
    """The JSON a cell printed last (whatever it printed before)."""
    return json.loads(output.strip().splitlines()[-1])


def progress_on_disk(home: Path) -> dict[str, dict]:
    """Every item's record as the store reads it from ``home``'s ``~/.autograd-lessons/``
    (read here, in the test's process, from the files the learner's kernel wrote)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(store.ENV, str(home / ".autograd-lessons" / "progress.json"))
        return store.read_all()


@pytest.fixture
def lesson_export(tmp_path):
    """The instructor's export of lesson 05 for otter (README: "Running a course"),
    started in the background into ``tmp_path/course``; the running command."""
    with subprocess.Popen(
            [sys.executable, "-m", "widgets.course", "export", "--otter", str(LESSON),
             str(tmp_path / "course")],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as export:
        yield export
        export.kill()  # if the test ended before it did


def right_answers() -> dict[str, str]:
    """Question -> the code of its exercise cell answered right."""
    data = tomllib.loads(ANSWERS.read_text())
    return {question: entry["code"].strip() for question, entry in data["right"].items()}


def answered_notebook(student_notebook: Path, answers: dict[str, str]) -> dict:
    """The student notebook with the exercise cell before each ``grader.check("Q")``
    replaced by ``answers[Q]`` (as a student fills it in)."""
    nb = json.loads(student_notebook.read_text())
    sources = ["".join(cell["source"]) for cell in nb["cells"]]
    for question, code in answers.items():
        nb["cells"][sources.index(f'grader.check("{question}")') - 1]["source"] = code
    return nb


def question_points(tests: Path) -> dict[str, float]:
    """Question -> points, as the export wrote them into each otter test file."""
    points = {}
    for test in sorted(tests.glob("*.py")):
        text = test.read_text()
        name = re.search(r"^name = (.+)$", text, re.M).group(1)
        points[ast.literal_eval(name)] = ast.literal_eval(
            re.search(r"^points = (.+)$", text, re.M).group(1))
    return points


def otter_grade(autograder: Path, submission: Path) -> tuple[dict[str, float], str]:
    """``otter run`` on one submission, as the instructor grades it: question -> score,
    and what otter printed."""
    done = subprocess.run(
        [sys.executable, "-m", "otter", "run", "-a", str(autograder), "-o",
         str(submission.parent), "--no-logo", str(submission)],
        cwd=submission.parent, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    tests = json.loads((submission.parent / "results.json").read_text())["tests"]
    return {t["name"]: t["score"] for t in tests if "score" in t}, done.stdout


# -- the test -----------------------------------------------------------------------------


def test_a_class_works_and_submits_on_jupyterhub(lesson_export, hub, tmp_path):
    assert hub.log_in("ada", hub.password) == 302, "the class password lets a learner in"
    assert hub.log_in("ada", hub.password + "x") == 403, "a wrong password does not"
    assert hub.log_in("eve", hub.password) == 403, "nor does a user not in the class"
    learners = {name: Learner(hub, name) for name in USERS}
    for learner in learners.values():  # both servers start at once, as in a class
        learner.start_server()
    for learner in learners.values():
        learner.wait_until_ready()

    # Each learner answers G6 in a kernel of their own: ada right, grace transposed.
    kernels = {name: learner.open_kernel() for name, learner in learners.items()}
    report = {name: last_line_json(kernel.run_code(G6_REPORT.format(answer=G6_ANSWERS[name])))
              for name, kernel in kernels.items()}
    for name in USERS:
        assert report[name]["learner"] == name
        assert report[name]["store"] == str(hub.home(name) / ".autograd-lessons"
                                            / "progress.json")
    assert report["ada"]["A"] != report["grace"]["A"], "problems are drawn per learner"
    assert report["ada"]["status"] == "solved"
    assert report["grace"]["status"] == "in progress"

    ada_g6, grace_g6 = (progress_on_disk(hub.home(name)).get("G6") for name in USERS)
    assert ada_g6 and grace_g6, "each home holds its learner's progress"
    assert ada_g6["solved"] and not grace_g6["solved"]
    assert ada_g6["misses"] == {}, "grace's wrong try is not in ada's home"
    assert any("transpose" in miss for miss in grace_g6["misses"]), grace_g6  # named
    assert all(part["ok"] for part in ada_g6["parts"].values()), ada_g6
    assert not grace_g6["parts"]["gradients:dB"]["ever"], grace_g6

    classmate = learners["ada"].request("GET", "api/status", token=learners["grace"].token)
    assert classmate.status_code == 403, "grace's token must not reach ada's server"
    for kernel in kernels.values():
        kernel.close()

    # The course: the student notebook pulled into ada's home, worked and submitted there.
    log, _ = lesson_export.communicate(timeout=300)
    assert lesson_export.returncode == 0, log
    student = tmp_path / "course" / "student"
    notebook = answered_notebook(student / LESSON.name, right_answers())
    ada = learners["ada"]
    for folder in ("course", "course/lesson05", "course/lesson05/tests"):
        ada.put_folder(folder)
    for test in sorted((student / "tests").glob("*.py")):
        ada.put_file(f"course/lesson05/tests/{test.name}", test.read_text())
    ada.put_file(f"course/lesson05/{LESSON.name}", json.dumps(notebook))
    assert (hub.home("ada") / "course" / "lesson05" / LESSON.name).is_file()

    lesson = ada.open_kernel(f"course/lesson05/{LESSON.name}")
    assert lesson.run_code("import os; print(os.getcwd())").strip() == str(
        hub.home("ada") / "course" / "lesson05")
    for cell in notebook["cells"]:  # in order, as Run All does; the last one exports
        if cell["cell_type"] == "code":
            lesson.run_code("".join(cell["source"]))
    lesson.close()

    zips = [name for name in ada.list_folder("course/lesson05") if name.endswith(".zip")]
    assert len(zips) == 1, zips
    submission = tmp_path / "submitted" / zips[0]
    submission.parent.mkdir()
    submission.write_bytes(ada.get_file(f"course/lesson05/{zips[0]}"))

    points = question_points(student / "tests")
    assert set(points) == set(right_answers())
    scores, otter_log = otter_grade(tmp_path / "course" / "autograder" / "autograder.zip",
                                    submission)
    assert {q: scores.get(q) for q in points} == points, otter_log[-3000:]

    # The lesson's checks ran in ada's kernel: her home has them all, grace's only G6.
    items = LESSONS["05"][1]
    ada_progress = progress_on_disk(hub.home("ada"))
    assert all(ada_progress.get(item, {}).get("solved") for item in items), ada_progress
    assert set(progress_on_disk(hub.home("grace"))) == {"G6"}
