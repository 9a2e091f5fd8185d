"""The notebook here is driven by tests/browser/test_browser.py in a real browser; it stores no
outputs, so nbval has nothing to compare in it: keep it out of the nbval run."""

collect_ignore_glob = ["*.ipynb"]
