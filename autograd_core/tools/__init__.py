"""Layer 6, tools that watch or measure the engine at work, without changing a gradient:

* ``graph.py``: the recorded graph as plain data (``capture``), for pictures and tables;
* ``anomaly.py``: ``detect_anomaly``, from a NaN in backward to the forward line behind it;
* ``counting.py``: ``count_ops``, ops run and multiply-adds per phase;
* ``memory.py`` and ``buffers.py``: where the memory of training goes, saved bytes defined once;
* ``instrument.py``: a table per module boundary of one batch;
* ``gradcheck.py``: the engine's Jacobian against central differences;
* ``allocator.py``: freed memory kept for reuse (fewer page faults per step).
"""
