"""The browser tests share one JupyterLab and one Chromium (tests/helpers/lab_session.py),
started by the first test that opens a page and stopped after the last.

The notebooks here are driven by those tests in a real browser; they store no outputs,
so nbval has nothing to compare in them: keep them out of the nbval run."""

import lab_session
import pytest

collect_ignore_glob = ["*.ipynb"]


@pytest.fixture(scope="session", autouse=True)
def _one_lab_for_every_browser_test(tmp_path_factory):
    lab_session.share_lab_in(lambda: tmp_path_factory.mktemp("shared-lab"))
    yield
    lab_session.close_shared_lab()
