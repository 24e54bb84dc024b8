"""Who is on the other end of the kernel: a person with widgets, or a runner.

An approval prompt is only worth showing when someone can click it. Headless
runners (nbclient, nbval, papermill, a script) would wait forever, so the
approval answerer asks :func:`is_interactive` first and, when nobody is
there, answers with the configured headless outcome at once.

How a widget frontend is recognised (measured with JupyterLab 4.6.6,
ipywidgets 8.1.9, ipykernel 7.4.0 and headless Chromium):

1. A JupyterLab / Notebook 7 widget manager opens a
   ``jupyter.widget.control`` comm when it connects to a kernel, and
   ipywidgets keeps it in ``Widget._control_comm``. The kernel only accepts
   that comm once ipywidgets is imported: in a fresh kernel the manager
   connects first, the comm is refused, and ``_control_comm`` stays ``None``
   until the page reconnects (reload, or a new tab on the same kernel).
2. So the current request is checked as well: JupyterLab and Notebook 7 send
   ``deletedCells`` and ``recordTiming`` in every ``execute_request``'s
   metadata; nbclient, nbval and ``jupyter_client``'s ``execute()`` send no
   metadata at all.

Either sign means widgets. Frontends that show neither (VS Code, Colab,
classic Notebook 6, ``jupyter console``) deliver a click only after the
running cell, so a prompt waiting in that cell could never hear it; but
they do answer the kernel's stdin while a cell runs, and every
``execute_request`` says whether its frontend takes input
(``allow_stdin``; nbclient, nbval and papermill send false). So
:func:`choose_channel` picks, per request: ``widgets`` on a widget sign,
``stdin`` when the request allows input, else ``headless`` (the configured
outcome, failing closed). When an editor is recognisable but neither holds
(request metadata without JupyterLab's keys), the first headless answer
prints a note saying so.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "FRONTEND_MODES",
    "LAB_EXECUTE_KEYS",
    "Channel",
    "FrontendMode",
    "RequestOrigin",
    "allows_stdin",
    "choose_channel",
    "current_request",
    "editor_without_widget_sign",
    "has_widget_frontend",
    "is_interactive",
    "request_origin",
]

FrontendMode = Literal["auto", "interactive", "stdin", "headless"]
FRONTEND_MODES: Final = ("auto", "interactive", "stdin", "headless")
Channel = Literal["widgets", "stdin", "headless"]
"""How a question reaches a person: buttons, a stdin line, or nobody."""
LAB_EXECUTE_KEYS: Final = frozenset({"deletedCells", "recordTiming"})
"""Metadata keys JupyterLab-family frontends put on each execute request."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestOrigin:
    """The kernel request a piece of code runs on behalf of.

    Attributes
    ----------
    msg_id
        The request's ``msg_id``: a re-run of a cell is a new request.
    msg_type
        Usually ``execute_request``; ``comm_msg`` for a widget callback.
    cell_id
        The notebook cell id, when the frontend sends one (JupyterLab does).
    """

    msg_id: str
    msg_type: str
    cell_id: str | None = None


def current_request() -> Mapping[str, Any] | None:
    """Return the kernel message being handled now, or None outside a kernel.

    ipykernel 7 keeps the parent in a context variable, so a task started by
    a cell still sees that cell's request after the cell has ended.
    """
    shell = _shell()
    kernel = getattr(shell, "kernel", None)
    get_parent = getattr(kernel, "get_parent", None)
    if get_parent is None:
        return None
    try:
        parent = get_parent("shell")
    except Exception:  # noqa: BLE001 - an odd kernel reads as "no request"
        return None
    if not isinstance(parent, Mapping) or not parent.get("header"):
        return None
    return parent


def request_origin(parent: Mapping[str, Any] | None = None) -> RequestOrigin | None:
    """Describe ``parent`` (default: the current request), or None."""
    if parent is None:
        parent = current_request()
    if parent is None:
        return None
    header = parent.get("header") or {}
    msg_id = header.get("msg_id")
    if not isinstance(msg_id, str) or not msg_id:
        return None
    metadata = parent.get("metadata") or {}
    cell_id = metadata.get("cellId") if isinstance(metadata, Mapping) else None
    return RequestOrigin(
        msg_id=msg_id,
        msg_type=str(header.get("msg_type", "")),
        cell_id=cell_id if isinstance(cell_id, str) and cell_id else None,
    )


def has_widget_frontend() -> bool:
    """Return True when a widget-capable frontend is connected.

    True if ipywidgets recorded a widget manager's control comm, or if the
    current request carries JupyterLab's execute metadata (see the module
    docstring for why both are needed).
    """
    module = sys.modules.get("ipywidgets.widgets.widget")
    widget = getattr(module, "Widget", None)
    if getattr(widget, "_control_comm", None) is not None:
        return True
    parent = current_request()
    if parent is None:
        return False
    metadata = parent.get("metadata")
    return isinstance(metadata, Mapping) and not LAB_EXECUTE_KEYS.isdisjoint(metadata)


def editor_without_widget_sign() -> bool:
    """Return True when a person's editor sent this request, but not a Lab one.

    Runners (nbclient, nbval, papermill) send no request metadata; VS Code
    sends a ``cellId`` and none of JupyterLab's keys. Such an editor may well
    show widgets that detection cannot see, so the user deserves a hint.
    """
    parent = current_request()
    if parent is None:
        return False
    metadata = parent.get("metadata")
    return (
        isinstance(metadata, Mapping)
        and bool(metadata)
        and LAB_EXECUTE_KEYS.isdisjoint(metadata)
    )


def allows_stdin(parent: Mapping[str, Any] | None = None) -> bool:
    """Whether ``parent`` (default: the current request) takes input.

    True for an ``execute_request`` whose frontend set ``allow_stdin``.
    """
    if parent is None:
        parent = current_request()
    if parent is None:
        return False
    header = parent.get("header") or {}
    content = parent.get("content")
    return (
        header.get("msg_type") == "execute_request"
        and isinstance(content, Mapping)
        and content.get("allow_stdin") is True
    )


def choose_channel(mode: str = "auto", *, stdin: bool | None = None) -> Channel:
    """Pick how to ask a person for the current request.

    ``interactive`` always means widgets, ``headless`` never asks, ``stdin``
    asks on stdin when the request can take input (else headless), and
    ``auto`` tries widgets, then stdin, then headless. ``stdin`` overrides
    whether input can be asked now (default: :func:`allows_stdin`).

    Raises ``ValueError`` for any other mode.
    """
    choice = mode.lower() if isinstance(mode, str) else mode
    if choice not in FRONTEND_MODES:
        raise ValueError(
            'frontend mode must be "auto", "interactive", "stdin" or "headless", '
            f'not {mode!r}; set it with %config DshConfig.frontend = "auto"'
        )
    if choice == "interactive":
        return "widgets"
    if choice == "headless":
        return "headless"
    if choice == "auto" and has_widget_frontend():
        return "widgets"
    can_read = allows_stdin() if stdin is None else stdin
    return "stdin" if can_read else "headless"


def is_interactive(mode: str = "auto") -> bool:
    """Whether a widget prompt would be shown for ``mode`` (see above).

    Raises ``ValueError`` for an unknown mode.
    """
    return choose_channel(mode, stdin=False) == "widgets"


def _shell() -> object | None:
    module = sys.modules.get("IPython")
    if module is None:
        return None
    try:
        return module.get_ipython()  # type: ignore[no-any-return]
    except Exception:  # noqa: BLE001 - no shell means no kernel
        return None
