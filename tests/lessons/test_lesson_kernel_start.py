"""A lesson's kernel that dies before it answers is started once more, and says why
(tests/helpers/nbval_kernel.py). The kernel's start is replaced by one that writes to
the stderr it is given and then fails as jupyter_client does when the process dies."""

from __future__ import annotations

import pytest

nbval_kernel = pytest.importorskip("nbval_kernel")


class Starts:
    """Stands in for nbval's ``start_new_kernel``: the first ``deaths`` starts print
    ``said`` on the kernel's stderr and die; a later one succeeds."""

    def __init__(self, deaths: int, said: bytes = b"zmq.error.ZMQError: Address in use"):
        self.deaths, self.said, self.calls = deaths, said, 0

    def __call__(self, *, startup_timeout, kernel_name, stderr, cwd):
        self.calls += 1
        if self.calls <= self.deaths:
            stderr.write(self.said + b"\n")
            stderr.flush()
            raise RuntimeError(nbval_kernel.DIED)
        return "manager", "client"


@pytest.fixture
def starts(monkeypatch):
    def install(deaths: int, **kw) -> Starts:
        fake = Starts(deaths, **kw)
        monkeypatch.setattr(nbval_kernel.nbval_kernel, "start_new_kernel", fake)
        monkeypatch.setattr(nbval_kernel.RestartingKernel, "_ensure_iopub_up", lambda self: None)
        return fake
    return install


def test_a_kernel_that_starts_is_started_once(starts, recwarn):
    fake = starts(0)
    kernel = nbval_kernel.RestartingKernel("python3")
    assert (kernel.km, kernel.kc, fake.calls) == ("manager", "client", 1)
    assert not [w for w in recwarn if "started again" in str(w.message)]


def test_a_kernel_that_dies_once_is_started_again_with_a_warning_that_says_why(starts):
    fake = starts(1)
    with pytest.warns(UserWarning, match="started again") as said:
        kernel = nbval_kernel.RestartingKernel("python3")
    assert (kernel.km, fake.calls) == ("manager", 2)
    assert "Address in use" in str(said[0].message)


def test_a_kernel_that_dies_twice_fails_the_lesson_with_its_stderr(starts):
    starts(2, said=b"ImportError: no module named ipykernel_launcher")
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="twice") as failed:
        nbval_kernel.RestartingKernel("python3")
    assert "no module named ipykernel_launcher" in str(failed.value)


def test_another_start_failure_is_not_retried(starts, monkeypatch):
    def refuses(**kw):
        raise RuntimeError("Kernel didn't respond in 60 seconds")
    starts(0)
    monkeypatch.setattr(nbval_kernel.nbval_kernel, "start_new_kernel", refuses)
    with pytest.raises(RuntimeError, match="didn't respond"):
        nbval_kernel.RestartingKernel("python3")


def test_nbval_starts_lessons_with_it():
    from nbval import plugin
    assert plugin.RunningKernel is nbval_kernel.RestartingKernel
