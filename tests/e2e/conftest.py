"""Real-browser fixtures: a JupyterLab server and Debian's Chromium.

The server runs on 127.0.0.1 with a random token and isolated Jupyter
folders, over a temporary copy of ``tests/e2e/notebooks``; it is stopped
by its PID. Tests drive it with Playwright's sync API (see ``e2e_lab``).

Without ``/usr/bin/chromium`` or the ``playwright`` package the tests are
skipped, except with ``CI=true``, where a missing browser is a failure.

The labextension under test is the repository's build
(``dsh_nb/labextension``) when it exists, linked into the isolated data
folder so it wins over an installed copy; otherwise the installed one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_lab import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LabServer,
    close_page,
    new_page,
    require_browser,
    running_lab,
    screenshot_on_failure,
)

HERE = Path(__file__).resolve().parent
# The notebooks are test data for the browser, not nbval subjects.
collect_ignore = ["notebooks"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: real-browser tests (Chromium + lab)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
    """Remember each phase's report so fixtures can screenshot failures."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """Start ``jupyter lab`` once for the session; stop it by PID."""
    require_browser()
    with running_lab(tmp_path_factory.mktemp("lab")) as server:
        yield server


@pytest.fixture(scope="session")
def browser(lab_server: LabServer) -> Iterator[Any]:
    """Launch Debian's Chromium once for the whole session."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(
    request: pytest.FixtureRequest, browser: Any, lab_server: LabServer
) -> Iterator[Any]:
    """A fresh page per test; screenshot on failure, then clean sessions."""
    pg = new_page(browser, lab_server)
    try:
        yield pg
    finally:
        screenshot_on_failure(request, pg)
        close_page(pg)
        lab_server.shutdown_sessions()
