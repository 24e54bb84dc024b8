"""``ApprovalPrompt``: Allow once / Allow for this session / Reject.

A thin view made of stock ipywidgets over a
:class:`~dsh_nb.notebook.answer.PendingAnswer`. It shows what the call will
do (``details``, escaped HTML built by the caller) above the buttons.
*Allow for this session* answers ``allowed-once`` like *Allow once*, and
marks the answer (``for_session``) so the caller can add the allow rule.
The first answer wins, whether it comes from a click in the browser,
``button.click()`` or ``approve()`` / ``allow_for_session()`` /
``reject()`` in code; afterwards every button is disabled and unhooked.
"""

from __future__ import annotations

from typing import Any, Final

from dsh_nb.cards.escape import esc, visible
from dsh_nb.notebook.answer import AnswerCallback, PendingAnswer
from dsh_nb.notebook.frontend import RequestOrigin

__all__ = [
    "ALLOW_LABEL",
    "REJECT_LABEL",
    "SESSION_LABEL",
    "AnswerCallback",
    "ApprovalPrompt",
]

ALLOW_LABEL: Final = "Allow once"
SESSION_LABEL: Final = "Allow for this session"
REJECT_LABEL: Final = "Reject"
_NO_TEX: Final = "mathjax_ignore tex2jax_ignore"


class ApprovalPrompt(PendingAnswer):
    """Allow once / Reject buttons over one future; the first answer wins.

    Parameters
    ----------
    tool_name
        The tool asking to run; shown escaped.
    reason
        Why the policy asks, if it said; shown escaped.
    call_id
        The call this prompt answers for.
    origin
        The kernel request that asked (used to spot a re-run cell).
    details
        What the call will do, as HTML the caller has escaped; shown
        between the question and the buttons.
    """

    def __init__(
        self,
        tool_name: str,
        *,
        reason: str | None = None,
        call_id: str | None = None,
        origin: RequestOrigin | None = None,
        details: str = "",
    ) -> None:
        super().__init__(tool_name, reason=reason, call_id=call_id, origin=origin)
        # esc() shows bidi overrides and controls as [U+202E], as the card
        # does: a tool name cannot reorder what the person approves.
        asked = f"<b>Approve tool call?</b> <code>{esc(tool_name)}</code>"
        if reason:
            asked += f": {esc(reason)}"
        import ipywidgets as widgets  # on first prompt: keeps %load_ext fast

        # The class keeps MathJax off tool text ("$x$" in a reason).
        self.header = widgets.HTML(
            value=f'<div class="{_NO_TEX}">{asked}{details}</div>'
        )
        tool_name = visible(tool_name)
        self.allow_button = widgets.Button(
            description=ALLOW_LABEL,
            button_style="success",
            tooltip=f"Run {tool_name} this once",
        )
        self.session_button = widgets.Button(
            description=SESSION_LABEL,
            button_style="info",
            tooltip=f"Run {tool_name} now, and from now on in this session",
            layout=widgets.Layout(width="auto"),
        )
        self.reject_button = widgets.Button(
            description=REJECT_LABEL,
            button_style="danger",
            tooltip=f"Do not run {tool_name}",
        )
        self.message = widgets.HTML(value="")
        self._row = widgets.HBox(
            [self.allow_button, self.session_button, self.reject_button]
        )
        self.widget = widgets.VBox([self.header, self._row, self.message])
        self.allow_button.on_click(self._on_allow)
        self.session_button.on_click(self._on_session)
        self.reject_button.on_click(self._on_reject)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def close(self) -> None:
        """Close every widget model (views disappear); settle if pending.

        Layout and style models too: an open box that points at a closed
        child breaks the state a reconnecting frontend asks for.
        """
        super().close()
        parts = (
            self.widget,
            self._row,
            self.header,
            self.allow_button,
            self.session_button,
            self.reject_button,
            self.message,
        )
        for part in parts:
            style = getattr(part, "style", None)
            layout = part.layout
            part.close()
            layout.close()
            if style is not None:
                style.close()

    def _on_allow(self, _button: object) -> None:
        self.approve()

    def _on_session(self, _button: object) -> None:
        self.allow_for_session()

    def _on_reject(self, _button: object) -> None:
        self.reject()

    def _settled(self) -> None:
        for button, handler in (
            (self.allow_button, self._on_allow),
            (self.session_button, self._on_session),
            (self.reject_button, self._on_reject),
        ):
            button.on_click(handler, remove=True)
            button.disabled = True
        self.message.value = f'<i class="{_NO_TEX}">{esc(self.summary())}</i>'
