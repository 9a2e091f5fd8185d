"""Freed memory kept for reuse: fewer page faults in a training step (glibc only).

Every op of a step returns fresh arrays, and a step of a small transformer allocates and
frees arrays of a few megabytes dozens of times. glibc serves each allocation above its
*mmap threshold* (128 KiB at first, adjusted upward as large blocks are freed) with
pages of its own, given back to the system when freed, and trims the top of its heap
once more than twice that threshold is free there. Every reuse of such memory then
starts with page faults: a fresh page costs a few microseconds to map and zero, and
one step of the benchmarked block (16 x 64 x 128) took about 3,300 of them, a quarter
of its time (``bench/README.md``).

:func:`keep_freed_memory`, called once when ``autograd_core`` is imported, sets glibc's
mmap threshold to ``MMAP_THRESHOLD`` and its trim threshold to ``TRIM_THRESHOLD``, so that
arrays up to 4 MiB come from the heap and up to 128 MiB of freed heap is kept for the next
op: the same step then faults about once, and runs about a quarter faster. The cost is
that much memory held by the process after it is freed, at most what the step itself
had in use at its peak. The limit is set by what one step frees at once when the
backward pass releases the graph: 16 MiB was enough for one block, but a 4-block GPT
at 16 x 64 x 128 (``bench/bench_gpt.py``) frees between 32 and 48 MiB, and with 16 MiB
its step took about 8,500 faults (some 40 ms of system time). Set
``AUTOGRAD_CORE_MALLOC=default`` to keep glibc's own behaviour; a threshold already set
with glibc's ``MALLOC_MMAP_THRESHOLD_`` or ``MALLOC_TRIM_THRESHOLD_`` is left alone, and
nothing happens where the C library is not glibc (macOS, Windows, musl).
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["keep_freed_memory", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]

MMAP_THRESHOLD = 4 << 20   # bytes: larger blocks get pages of their own
TRIM_THRESHOLD = 128 << 20  # bytes of free heap kept before its top is given back
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
OPT_OUT = "AUTOGRAD_CORE_MALLOC"


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed memory for reuse (see the module docstring); True if it
    did, False where it was not asked (opted out, thresholds set by the environment, not
    glibc)."""
    if os.environ.get(OPT_OUT, "").strip().lower() == "default":
        return False
    if any(name in os.environ for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")):
        return False
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - glibc only (musl has mallopt, but no-ops)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
