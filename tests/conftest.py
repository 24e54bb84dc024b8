"""Shared pytest setup: the ``--slow`` mode and hypothesis profiles.

``pytest`` keeps property tests bounded so the suite stays fast; ``pytest
--slow`` runs every property test with at least 10,000 examples.
"""

from __future__ import annotations

import os
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


# What a test module imports to start a kernel (or a Jupyter server).
_KERNEL_HARNESSES = ("kernel_harness", "nbtools", "nbclient", "jupyter_client")


# Modules whose tests start other processes or servers (MCP peers and
# standalone servers, a model server over HTTP, JupyterLab, the benchmark
# and docs scripts, the load and reliability runs): with kernels and the
# browser, the quick loop leaves them out (``not server``).
_SERVER_MODULES = frozenset(
    {
        "docs/test_benchmarks.py",
        "docs/test_demo.py",
        "docs/test_front_door.py",
        "docs/test_production.py",
        "docs/test_readme.py",
        "mcp/test_mcp_bridge.py",
        "mcp/test_mcp_connect.py",
        "mcp/test_mcp_runtime_trust.py",
        "mcp/test_mcp_serve.py",
        "mcp/test_mcp_standalone.py",
        "mcp/test_mcp_standalone_peers.py",
        "mcp/test_mcp_startup.py",
        "mcp/test_mcp_stateless.py",
        "mcp/test_mcp_typescript.py",
        "notebook/test_chat_text_xss.py",
        "notebook/test_kernel_secrets.py",
        "reliability/test_load.py",
        "unit/test_evals_bfcl.py",
        "unit/test_schema_patterns.py",
    }
)
_TESTS = os.path.dirname(os.path.abspath(__file__))


def _heavy_marks(item: pytest.Item) -> list[pytest.MarkDecorator]:
    """``browser`` for tests that drive Chromium, ``kernel`` for tests that
    start a kernel, ``server`` for those that start other processes:
    ``pytest -m "not kernel and not browser and not server"`` is the quick
    loop. Marked by what the test needs, so a new test file that uses a
    kernel harness is marked without anyone remembering to."""
    parts = item.path.parts
    if "e2e" in parts:
        return [pytest.mark.browser]
    if item.path.suffix == ".ipynb" or "install" in parts or "notebooks" in parts:
        return [pytest.mark.kernel]  # nbval, a fresh install, Binder
    module = getattr(item, "module", None)
    names = set(vars(module)) if module is not None else set()
    if names & set(_KERNEL_HARNESSES) or "KernelHarness" in names:
        return [pytest.mark.kernel]
    if os.path.relpath(item.path, _TESTS).replace(os.sep, "/") in _SERVER_MODULES:
        return [pytest.mark.server]
    return []


# pytest-xdist (pyproject's ``-n auto --dist loadfile --no-loadscope-reorder``)
# sends each test file whole to one worker, in collection order, so a
# module's shared kernel, server or page stays one and its tests keep their
# order. Browser files, sorted last, reach a worker only after every other
# file was handed out, as Playwright needs (below); each worker that runs
# them starts its own JupyterLab and Chromium.
_WORKERS: Final = 2
# Files that take minutes go to a worker first, so the other worker works
# through the rest meanwhile instead of waiting for them at the end
# (measured on two busy cores: the Binder install and its notebooks 10 min,
# the browser corpus and the load run about 1 to 2 min each).
_FIRST: Final = ("notebooks/test_binder.py", "reliability/test_load.py")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers (the machines CI runs on have two cores)
    for the suite or a folder; none (this process) when only files or
    single tests are named, where starting workers costs more than it
    saves. ``-n N`` on the line wins."""
    named = [str(arg).split("::")[0] for arg in config.args]
    if named and all(os.path.isfile(arg) for arg in named):
        return 0
    return _WORKERS


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
            os.path.relpath(item.path, _TESTS).replace(os.sep, "/") not in _FIRST,
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
