"""Engine features an exercise needs, imported when first used.

Some experiments need parts of the engine that may be missing in a given version
(forward mode, op counting, checkpointing, hooks, anomaly detection). Their checks
import them through :func:`engine_feature`, which turns a missing feature into a
``NotImplementedError`` that names it, instead of failing when the package loads.
"""

from __future__ import annotations

import importlib


def not_available(feature: str, exercise: str) -> NotImplementedError:
    """The error a check raises when the engine feature its experiment needs is missing."""
    return NotImplementedError(
        f"{exercise} needs {feature}, which the engine does not have yet.\n"
        "Hint: this exercise will work once that feature lands in autograd_core."
    )


def engine_feature(module: str, name: str, feature: str, exercise: str):
    """``module.name`` from the engine, imported when first needed; NotImplementedError
    naming the feature if the engine does not have it (yet)."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise not_available(feature, exercise) from None
