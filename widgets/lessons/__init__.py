"""Lesson support: helpers and experiments that exist for one lesson.

The reusable views live beside this package (``widgets.draw``, ``BackwardStepper``,
``MemoryView``, ...) and the question-bank checks in ``widgets.exercises``; what is
here serves one lesson's text, tables and pictures, and imports the engine and the
views, never the other way round.

* :mod:`.graphs`: lesson 02 (graph motifs, pictures drawn left to right, define-by-run)
* :mod:`.memory`: lesson 04 (watching saved tensors live and die)
* :mod:`.routing`: lesson 06 (grids and pooling windows)
* :mod:`.convolution`: lesson 07 (arrays as annotated panels)
* :mod:`.floats`: lesson 08 (the order of a float32 sum)
* :mod:`.modes`: lesson 09 (nested functions, finite differences, forward vs reverse cost)
* :mod:`.symbolic`: lesson 09 (the same nested functions differentiated by sympy)
* :mod:`.checkpointing`: lessons 10 and 12 (one checkpointed training step, measured)
* :mod:`.debugging`: lesson 11 (tracebacks that name notebook cells)
* :mod:`.capstone`: lesson 12 (digit images and training curves)
"""
