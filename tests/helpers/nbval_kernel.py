"""nbval's kernel for a lesson, started once more when it dies before it ever answers.

A kernel that exits before replying to its first ``kernel_info`` request has run none
of the lesson: it failed to start (two kernels starting at once can pick the same free
port, and the second then dies binding it; jupyter_client issue 154). nbval sends the
kernel's stderr to ``/dev/null`` and fails the lesson's first cell with "Kernel died
before replying to kernel_info" (seen once in CI, on lesson 12, Python 3.11). Here the
kernel's stderr goes to a file instead, and a kernel that dies that way is started a
second time, with a warning that quotes the end of what the first one printed, so the
report says why. A second death fails as before, with the same quote.
"""

from __future__ import annotations

import tempfile
import warnings

from nbval import kernel as nbval_kernel
from nbval import plugin as nbval_plugin

DIED = "Kernel died before replying to kernel_info"
STDERR_LINES = 12


def _last_lines(stream) -> str:
    stream.seek(0)
    lines = stream.read().decode(errors="replace").splitlines()
    return "\n".join(lines[-STDERR_LINES:]) or "(it printed nothing)"


class RestartingKernel(nbval_kernel.RunningKernel):
    """nbval's ``RunningKernel``, with the kernel's stderr kept and one more start when
    the first dies before its ``kernel_info`` reply."""

    def __init__(self, kernel_name, cwd=None, startup_timeout=60):
        for attempt in (1, 2):
            stderr = tempfile.TemporaryFile()
            try:
                self.km, self.kc = nbval_kernel.start_new_kernel(
                    startup_timeout=startup_timeout, kernel_name=kernel_name,
                    stderr=stderr, cwd=cwd)
            except RuntimeError as error:
                if DIED not in str(error):
                    raise
                said = _last_lines(stderr)
                if attempt == 2:
                    raise RuntimeError(f"{error}, twice; its stderr ended:\n{said}") from error
                warnings.warn(f"a lesson's kernel died before it answered and was started "
                              f"again; its stderr ended:\n{said}", stacklevel=2)
            else:
                break
            finally:
                stderr.close()
        self._ensure_iopub_up()


def install() -> None:
    """Make nbval start every lesson's kernel with :class:`RestartingKernel`."""
    nbval_plugin.RunningKernel = RestartingKernel
