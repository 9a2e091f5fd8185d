"""Small PyTorch model files with their training loops, written in the style of the
teaching examples learners bring; ``tests/engine/test_ported_models.py`` runs each on
PyTorch as written and on the engine with only its import lines changed."""
