"""``%tool_eval`` in an in-process shell: the widget bar, the text line."""

from __future__ import annotations

import sys
from pathlib import Path

from chatkit import configure
from ipshell import run
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.models.replay_server import ReplayServer

EVALS = Path(__file__).parent.parent / "evals"
WIDGET = "application/vnd.jupyter.widget-view+json"


def setup(ip: InteractiveShell, server: ReplayServer) -> None:
    sys.path.insert(0, str(EVALS))
    try:
        import responder
    finally:
        sys.path.remove(str(EVALS))
    server._responder = responder.Responder()
    import dsh_nb

    for definition in responder.registry().view().values():
        dsh_nb.registry().register(definition)
    ip.user_ns["cases"] = responder.cases()
    configure(ip, server)


def test_the_bar_shows_the_pass_rate(
    ip: InteractiveShell, server: ReplayServer
) -> None:
    from ipywidgets.widgets.widget import _instances

    setup(ip, server)
    run(ip, '%config DshConfig.frontend = "interactive"')
    cell = run(ip, "%tool_eval cases --trials 10 -o rep")
    assert cell.error is None, cell.error
    views = [o["data"][WIDGET] for o in cell.outputs if WIDGET in o["data"]]
    assert len(views) == 1
    box = _instances[views[0]["model_id"]]
    bar, label = box.children
    assert (bar.value, bar.max, bar.bar_style) == (80, 80, "success")
    assert label.value == "80/80 trials · passed 42% [32%, 53%]"
    assert any("dsh-EvalReport" in o["data"].get("text/html", "") for o in cell.outputs)
    assert ip.user_ns["rep"].summary()["passed"].successes == 34


def test_headless_prints_a_line(ip: InteractiveShell, server: ReplayServer) -> None:
    setup(ip, server)
    run(ip, '%config DshConfig.frontend = "headless"')
    cell = run(ip, "%tool_eval cases --trials 1")
    assert cell.error is None, cell.error
    assert cell.stdout.strip().splitlines()[-1].startswith("tool_eval: 8/8 trials")
    assert not any(WIDGET in o["data"] for o in cell.outputs)
