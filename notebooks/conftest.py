"""Let nbval see a live card's final state, as every frontend does.

A dsh_nb card is one display that updates in place (pending, running, then
done). JupyterLab, nbclient and nbconvert apply ``update_display_data``
messages, so the committed notebooks hold each card's final state. nbval
0.11 drops those messages and would compare every card in its first,
pending state. This conftest applies each update to the output nbval has
already collected, so strict comparison checks what a reader sees.

It only touches displays that carry a ``display_id``; everything else goes
through nbval untouched. It lives here, beside the notebooks, because pytest
loads it for ``pytest --nbval notebooks/``.
"""

from __future__ import annotations

from typing import Any

from nbformat import from_dict
from nbval.plugin import IPyNbFile

__all__: list[str] = []

_ORIGINAL = IPyNbFile.get_kernel_message
_DISPLAYS = "_dsh_nb_displays"


def _get_kernel_message(self: IPyNbFile, *args: Any, **kwargs: Any) -> Any:
    msg = _ORIGINAL(self, *args, **kwargs)
    kind = msg.get("msg_type")
    content = msg.get("content") or {}
    display_id = (content.get("transient") or {}).get("display_id")
    if not display_id or kind not in ("display_data", "update_display_data"):
        return msg
    shown: dict[str, list[Any]] = self.__dict__.setdefault(_DISPLAYS, {})
    if kind == "display_data":
        # nbval stores these nodes as they are (it only converts plain
        # dicts), so updating them later updates the collected output.
        content["data"] = from_dict(content.get("data") or {})
        content["metadata"] = from_dict(content.get("metadata") or {})
        shown.setdefault(display_id, []).append(content)
        return msg
    for output in shown.get(display_id, ()):
        for key in ("data", "metadata"):
            output[key].clear()
            output[key].update(from_dict(content.get(key) or {}))
    # Handled: hand nbval a message it skips instead of "unhandled iopub msg".
    return {**msg, "msg_type": "status", "content": {"execution_state": "busy"}}


# Marked, so loading this file twice never wraps nbval twice.
_get_kernel_message.applies_display_updates = True  # type: ignore[attr-defined]
if not getattr(_ORIGINAL, "applies_display_updates", False):
    setattr(IPyNbFile, "get_kernel_message", _get_kernel_message)  # noqa: B010
