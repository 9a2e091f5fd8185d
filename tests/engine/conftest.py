"""Fixtures shared by the engine's tests."""

from __future__ import annotations

import pytest

import autograd_core as ag


@pytest.fixture
def float32_default():
    """PyTorch's default dtype, float32, for a test that counts float32 bytes or compares
    layers with PyTorch's float32 ones; the engine's default is restored afterwards."""
    before = ag.get_default_dtype()
    ag.set_default_dtype(ag.float32)
    yield
    ag.set_default_dtype(before)
