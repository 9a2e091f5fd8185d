"""Other CPU kernels for NumPy and OpenBLAS, for a run that proves stored outputs do not
depend on the machine.

NumPy picks a SIMD version of each loop when it starts (AVX-512, AVX2, ... or its
baseline), and OpenBLAS a kernel for the processor it finds; the versions round
differently in the last bits (``np.exp``, ``np.tanh``, a matmul). A lesson whose stored
output shows such bits passes where it was stored and fails on another machine.
:func:`other_kernels_env` gives the environment that switches both to other versions
on this machine: every SIMD extension NumPy dispatches to, and this machine has, turned
off (``NPY_DISABLE_CPU_FEATURES``), and OpenBLAS told to use another processor's kernel
(``OPENBLAS_CORETYPE``) unless the environment already chose one (some processors need
that setting to compute right, so it is left alone).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

# OpenBLAS kernels to switch to, in order, each with the CPU feature it needs (as NumPy
# names it; None: every processor of that kind runs it): Sandybridge's needs AVX,
# Haswell's AVX2; on aarch64 the generic ARMv8 kernel, or Neoverse N1's.
OPENBLAS_OTHER = {"x86_64": (("Sandybridge", "AVX"), ("Haswell", "AVX2")),
                  "aarch64": (("ARMV8", None), ("NEOVERSEN1", "ASIMDDP"))}

REPORT = """
import json, numpy as np, threadpoolctl
try:
    from numpy._core import _multiarray_umath as umath
except ImportError:  # NumPy 1.x
    from numpy.core import _multiarray_umath as umath
blas = [i.get("architecture") for i in threadpoolctl.threadpool_info()
        if i.get("user_api") == "blas"]
print(json.dumps({"dispatch": list(umath.__cpu_dispatch__),
                  "on": sorted(k for k, v in umath.__cpu_features__.items() if v),
                  "blas": blas[0] if blas else None}))
"""


def kernels(env: dict | None = None) -> dict:
    """What NumPy and OpenBLAS use in a fresh Python started with ``env``: ``dispatch``
    (the SIMD extensions NumPy can dispatch to), ``on`` (the CPU features it finds
    turned on) and ``blas`` (OpenBLAS's kernel, e.g. ``SkylakeX``)."""
    done = subprocess.run([sys.executable, "-c", REPORT], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def other_kernels_env() -> tuple[dict, str]:
    """This process's environment with NumPy's and OpenBLAS's kernels changed, and one
    sentence saying which (or, when nothing can be changed here, an empty dict and the
    sentence why)."""
    now = kernels()
    features = [f for f in now["dispatch"] if f in now["on"]]
    env = dict(os.environ)
    said = []
    if features:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(features)
        said.append(f"NumPy without {', '.join(features)}")
    if "OPENBLAS_CORETYPE" not in os.environ and now["blas"]:
        choices = OPENBLAS_OTHER.get(platform.machine(), ())
        other = next((kernel for kernel, needs in choices if kernel.lower() != now["blas"].lower()
                      and (needs is None or needs in now["on"])), None)
        if other and _starts(dict(env, OPENBLAS_CORETYPE=other)):
            env["OPENBLAS_CORETYPE"] = other
            said.append(f"OpenBLAS's {other} kernel instead of {now['blas']}")
    if not said:
        return {}, ("this machine offers NumPy no SIMD extension to turn off and OpenBLAS "
                    "no other kernel")
    return env, "; ".join(said)


def _starts(env: dict) -> bool:
    """Whether NumPy and OpenBLAS start and report with ``env`` (a kernel this CPU cannot
    run would stop the process)."""
    try:
        kernels(env)
    except subprocess.CalledProcessError:
        return False
    return True
