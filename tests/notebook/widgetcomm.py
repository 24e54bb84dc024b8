"""A recording comm and a frontend's click, as ipywidgets' own tests do.

ipywidgets' tests put a ``DummyComm`` that records what it sends under
every widget (``widgets/tests/utils.py``), assert on the messages
(``test_send_state.py``) and play the frontend by handing a widget the
message a browser would send (``test_set_state.py``). Ours is a real
``comm.base_comm.BaseComm``, so it registers with the comm manager and a
click travels the kernel's own path: a ``comm_msg`` with the custom content
``{"event": "click"}``, ``CommManager.comm_msg``, the widget's handler.
"""

from __future__ import annotations

from typing import Any

import comm
import ipywidgets
from comm.base_comm import BaseComm

__all__ = ["RecordingComm", "frontend_click", "messages", "updates"]


class RecordingComm(BaseComm):
    """A comm that writes down every message the kernel side publishes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []
        super().__init__(*args, **kwargs)  # publishes comm_open: set up first

    def publish_msg(
        self,
        msg_type: str,
        data: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        buffers: Any = None,
        **keys: Any,
    ) -> None:
        self.messages.append((msg_type, dict(data or {})))


def _comm_of(widget: ipywidgets.Widget) -> RecordingComm:
    channel = widget.comm
    assert isinstance(channel, RecordingComm), f"{widget!r} has comm {channel!r}"
    return channel


def messages(widget: ipywidgets.Widget) -> list[tuple[str, dict[str, Any]]]:
    """Every message the widget's comm has sent, ``comm_open`` first."""
    return list(_comm_of(widget).messages)


def updates(channel: ipywidgets.Widget | RecordingComm) -> list[dict[str, Any]]:
    """The state each ``update`` message synced to the frontend, in order."""
    comm_ = channel if isinstance(channel, RecordingComm) else _comm_of(channel)
    return [
        data["state"]
        for kind, data in comm_.messages
        if kind == "comm_msg" and data.get("method") == "update"
    ]


def frontend_click(button: ipywidgets.Button) -> None:
    """Click ``button`` as a browser does: a custom comm message to its model.

    A closed button has no comm any more, and the click goes nowhere, as it
    does in a kernel.
    """
    channel = button.comm
    comm_id = channel.comm_id if channel is not None else "closed"
    message = {
        "header": {"msg_type": "comm_msg"},
        "content": {
            "comm_id": comm_id,
            "data": {"method": "custom", "content": {"event": "click"}},
        },
        "buffers": [],
    }
    comm.get_comm_manager().comm_msg(None, None, message)
