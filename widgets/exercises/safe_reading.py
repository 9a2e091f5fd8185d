"""Reading files a learner, a sync tool or an LMS can touch, so that none can stop a reader.

Progress journals, an earlier ``progress.json``, exported progress and otter's results
are written by other programs and sometimes by hand, and one of them can be anything: a
half-written line, a value nested ten thousand deep, a named pipe or a link that loops.
The readers of those files go through this module, which refuses what it cannot read with
a ``ValueError`` whose text is one clause saying why (for the sentence the reader shows),
and never blocks or raises anything else:

* :func:`read_regular` opens without blocking, then reads only a regular file (a named
  pipe, a device or a folder is refused, a link that loops cannot be opened) of at most a
  given size;
* :func:`parse_json` reads JSON no deeper than :data:`MAX_DEPTH` levels (deeper nesting
  is no file of ours; the deepest would otherwise exhaust Python's recursion).
"""

from __future__ import annotations

import json
import os
import stat

MAX_DEPTH = 64  # nesting levels a progress or results file never comes near


def read_regular(path: str | os.PathLike, max_bytes: int, start: int = 0) -> bytes:
    """The bytes of the regular file ``path`` from offset ``start`` to its end; a
    ValueError (one clause) if it is not a regular file, cannot be opened, or holds more
    than ``max_bytes`` bytes from ``start``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ValueError(f"it could not be opened ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("it is not a regular file (a folder, a named pipe or a device)")
        if info.st_size - start > max_bytes:
            raise ValueError(f"it is larger than {_size_text(max_bytes)}, far more than a "
                             "file of this kind holds")
        os.lseek(fd, start, os.SEEK_SET)
        chunks, left = [], info.st_size - start
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise ValueError(f"it could not be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def parse_json(data: bytes | str) -> object:
    """The JSON value of ``data``; a ValueError (one clause) if it is not JSON or is
    nested deeper than :data:`MAX_DEPTH`."""
    try:
        value = json.loads(data)
    except RecursionError:  # deeper than Python's own limit
        raise ValueError(f"it is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:
        raise ValueError(f"it is not JSON ({str(exc)[:60]})") from None
    if _depth_over(value, MAX_DEPTH):
        raise ValueError(f"it is nested more than {MAX_DEPTH} levels deep")
    return value


def _depth_over(value: object, limit: int) -> bool:
    """Whether lists and dicts nest more than ``limit`` deep (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in item)
    return False


def _size_text(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 else f"{n // 2**10} KiB"
