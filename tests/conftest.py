"""Shared pytest setup: the ``--slow`` mode and hypothesis profiles.

``pytest`` keeps property tests bounded so the suite stays fast; ``pytest
--slow`` runs every property test with at least 10,000 examples.
"""

from __future__ import annotations

import os
import types
from typing import Final

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "slow",
    max_examples=10_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="run property tests with >= 10,000 examples and the slow-marked tests",
    )


def pytest_configure(config: pytest.Config) -> None:
    slow = config.getoption("--slow", default=False) or os.environ.get("DSH_SLOW")
    settings.load_profile("slow" if slow else "default")
    config.pluginmanager.register(_NotebooksOnce(), "dsh-notebooks-once")


# What a test module imports to start a kernel (or a Jupyter server).
_KERNEL_HARNESSES = ("kernel_harness", "nbtools", "nbclient", "jupyter_client")
# What a test module imports to start other processes: the harnesses for
# scripts and programs (tests/processes.py), ``python -m dsh_nb serve``,
# the Node peers and nginx (tests/mcp/), and the MCP SDK's stdio client,
# which launches the server it speaks to.
_SERVER_HARNESSES = (
    "processes",
    "servekit",
    "nodepeers",
    "nginxkit",
    "mcp.client.stdio",
)
# Fixtures that only a test that starts servers asks for (itself or through
# another fixture): the runtime folder an MCP server writes its entry to
# (tests/mcp/conftest.py).
_SERVER_FIXTURES = frozenset({"runtime"})
_ORIGINS: dict[str, set[str]] = {}


def _origins(module: types.ModuleType) -> set[str]:
    """The modules a test module's names come from, with their parents."""
    if module.__name__ in _ORIGINS:
        return _ORIGINS[module.__name__]
    found = _ORIGINS[module.__name__] = set()
    for value in list(vars(module).values()):
        if isinstance(value, types.ModuleType):
            name = value.__name__
        else:
            name = getattr(value, "__module__", None)
        if isinstance(name, str):
            parts = name.split(".")
            found.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
    return found


def _heavy_marks(item: pytest.Item) -> list[pytest.MarkDecorator]:
    """``browser`` for tests that drive Chromium, ``kernel`` for tests that
    start a kernel, ``server`` for those that start other processes or
    servers: ``pytest -m "not kernel and not browser and not server"`` is
    the quick loop. Marked by what the test uses (the harness its module
    imports, the fixtures it asks for), so a new test is marked without
    anyone remembering to. A module that is slow for another reason says
    so itself with ``pytestmark``."""
    parts = item.path.parts
    if "e2e" in parts:
        return [pytest.mark.browser]
    if item.path.suffix == ".ipynb" or "install" in parts or "notebooks" in parts:
        return [pytest.mark.kernel]  # nbval, a fresh install, Binder
    module = getattr(item, "module", None)
    origins = _origins(module) if module is not None else set()
    if origins.intersection(_KERNEL_HARNESSES):
        return [pytest.mark.kernel]
    fixtures = set(getattr(item, "fixturenames", ()))
    if origins.intersection(_SERVER_HARNESSES) or fixtures & _SERVER_FIXTURES:
        return [pytest.mark.server]
    return []


# pytest-xdist (pyproject's ``-n auto --dist loadfile --no-loadscope-reorder``)
# sends each test file whole to one worker, in collection order, so a
# module's shared kernel, server or page stays one and its tests keep their
# order. Browser files, sorted last, reach a worker only after every other
# file was handed out, as Playwright needs (below); each worker that runs
# them starts its own JupyterLab and Chromium.
# One worker more than the cores: about a tenth of the suite waits (servers
# starting, kernels replying, timeouts under test), and a third worker fills
# that. Measured on two quiet cores, whole suite: two workers kept the cores
# 91% busy and took 850 s; three, 97% and 740 s.
_WORKERS: Final = (os.cpu_count() or 1) + 1
# Files that take minutes go to a worker first, so the other worker works
# through the rest meanwhile instead of waiting for them at the end
# (measured on two busy cores: the Binder install and its notebooks 5 to 8
# min, each of the others 1 to 3 min).
_FIRST: Final = (
    "notebooks/test_binder.py",
    "reliability/test_load.py",
    "docs/test_benchmarks.py",
    # After a minute or more: .ci/run's npm ci is done by then.
    "mcp/test_mcp_conformance.py",
    "docs/test_production.py",
    # Browser files, costliest first, so the last one to finish is short.
    "e2e/test_xss_corpus.py",
    "e2e/test_model_text_xss.py",
    "e2e/test_frontend_html.py",
    "e2e/test_browser_mcp_approval.py",
)
_TESTS: Final = os.path.dirname(os.path.abspath(__file__))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the cores (three on the two-core
    machines CI runs on) for the suite or a folder; none (this process)
    when only files or single tests are named, where starting workers
    costs more than it saves. ``-n N`` on the line wins."""
    named = [str(arg).split("::")[0] for arg in config.args]
    if named and all(os.path.isfile(arg) for arg in named):
        return 0
    return _WORKERS


_BINDER: Final = os.path.join(_TESTS, "notebooks", "test_binder.py")
_NOTEBOOKS: Final = os.path.join(os.path.dirname(_TESTS), "notebooks")


class _NotebooksOnce:
    """The teaching notebooks run once per session, not twice.

    The Binder test installs the package as Binder does and runs every
    notebook under nbval there, against the working tree's code; running
    them again here, against the checkout, would check the same cells a
    second time (14 kernels, about a minute of a worker's time). So
    when the Binder test is selected, it is where they run; naming a
    notebook or ``notebooks/`` still runs them here. Last, so that ``-m``,
    ``-k`` and ``--deselect`` have chosen first.
    """

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if not any(str(item.path) == _BINDER for item in items):
            return
        again = [
            item
            for item in items
            if item.path.suffix == ".ipynb"
            and os.path.dirname(str(item.path)) == _NOTEBOOKS
        ]
        if again:
            config.hook.pytest_deselected(items=again)
            drop = set(map(id, again))
            items[:] = [item for item in items if id(item) not in drop]


def _first(item: pytest.Item) -> int:
    """Where a file stands among the costly ones (listed first, in order)."""
    name = os.path.relpath(item.path, _TESTS).replace(os.sep, "/")
    return _FIRST.index(name) if name in _FIRST else len(_FIRST)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by these marks
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    # Browser tests go last: Playwright's sync API keeps an event loop
    # running on the main thread until the session ends, which would break
    # every asyncio test collected after it.
    items.sort(
        key=lambda item: (
            "e2e" in item.path.parts,
            _first(item),
        )
    )
    for item in items:
        for mark in _heavy_marks(item):
            item.add_marker(mark)
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
