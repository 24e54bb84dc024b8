"""``ask_person``: one question to a person, through the request's channel.

The seam every question goes through in a notebook: an approval's outcome
and a tool's own question (``ctx.ask``) alike. The channel is chosen per
request, as for approvals (:func:`~dsh_nb.notebook.frontend.choose_channel`
with ``%config DshConfig.frontend``): a small widget form where the frontend
delivers clicks while the cell runs, one line on the kernel's stdin where it
takes input instead (VS Code, Colab, the classic Notebook), and nobody in a
headless run (``unavailable`` at once). ``DshConfig.approval_timeout``, the
call's abort signal and the stop button end the wait as ``cancel``; nothing
here blocks the kernel's loop.

Examples
--------
>>> from dsh_nb.cards.question import Question
>>> question = Question(text="How many rows?", parse=int)
>>> answer = await ask_person(question)  # doctest: +SKIP
>>> answer.action, answer.value  # doctest: +SKIP
('accept', 12)
"""

from __future__ import annotations

import asyncio
import html
from typing import TYPE_CHECKING, Any

from dsh_nb.cards.question import PersonAnswer, Question
from dsh_nb.notebook.frontend import choose_channel
from dsh_nb.notebook.waiting import PendingAsk, interruptible

if TYPE_CHECKING:
    from dsh_nb.tools.running.abort import AbortSignal

__all__ = ["QuestionForm", "ask_person"]

_NO_TEX = "mathjax_ignore tex2jax_ignore"


async def ask_person(
    question: Question,
    *,
    timeout: float | None = None,
    signal: AbortSignal | None = None,
    mode: str | None = None,
) -> PersonAnswer:
    """Ask ``question``; return how it ended (never raises for the channel).

    Parameters
    ----------
    question
        The text, and either fixed answers or a ``parse`` for a free one.
    timeout
        Seconds to wait; default ``DshConfig.approval_timeout``.
    signal
        An abort signal (the call's) that ends the wait as ``cancel``.
    mode
        A ``DshConfig.frontend`` value; default the configured one.
    """
    from dsh_nb.notebook.current import loaded

    state = loaded()
    if state is None:
        return PersonAnswer(action="unavailable", note="dsh_nb is not loaded")
    config = state.config
    stdin = state.stdin
    target = stdin.target() if stdin is not None else None
    channel = choose_channel(mode or config.frontend, stdin=target is not None)
    if channel == "headless":
        return PersonAnswer(action="unavailable", note="nobody can be asked here")
    wait = timeout if timeout is not None else config.approval_timeout
    pending = PendingAsk(asyncio.get_running_loop(), wait)
    unwatch = (
        signal.add_callback(lambda _r: pending.stop_threadsafe("the call was aborted"))
        if signal is not None
        else None
    )
    form: QuestionForm | None = None
    try:
        with interruptible(pending):
            if channel == "stdin" and stdin is not None and target is not None:
                from dsh_nb.notebook.stdinprompt import ask_on_stdin

                got = await pending.run(ask_on_stdin(question, stdin, target))
            else:
                form = QuestionForm(question)
                form.show()
                got = await pending.run(form.wait())
    finally:
        pending.close()
        if unwatch is not None:
            unwatch()
        if form is not None:
            form.close()
    if isinstance(got, PersonAnswer):
        return got
    return PersonAnswer(action="cancel", note=pending.note or "cancelled")


class QuestionForm:
    """The widget form of a question: a button per answer, or a text box."""

    def __init__(self, question: Question) -> None:
        import ipywidgets as widgets

        self.question = question
        self._loop = asyncio.get_running_loop()
        self._future: asyncio.Future[PersonAnswer] = self._loop.create_future()
        text = html.escape(question.text)  # one_line() is for stdin; keep lines
        self.header = widgets.HTML(value=f'<div class="{_NO_TEX}"><b>{text}</b></div>')
        self.message = widgets.HTML(value="")
        self.text: Any = None
        buttons = []
        if question.choices:
            for choice in question.choices:
                button = widgets.Button(description=choice.label.capitalize())
                button.on_click(lambda _b, c=choice.value: self._typed(c, True))
                buttons.append(button)
        else:
            self.text = widgets.Text(placeholder="your answer")
            send = widgets.Button(description="Answer", button_style="primary")
            send.on_click(lambda _b: self._typed(self.text.value, False))
            decline = widgets.Button(description="Decline")
            decline.on_click(lambda _b: self._settle(PersonAnswer(action="decline")))
            buttons = [send, decline]
        self.buttons = buttons
        row = widgets.HBox([self.text, *buttons] if self.text else buttons)
        self.widget = widgets.VBox([self.header, row, self.message])

    def show(self) -> None:
        """Display the form in the current cell."""
        from IPython.display import display

        show: Any = display
        show(self.widget)

    async def wait(self) -> PersonAnswer:
        """The answer, once given."""
        return await asyncio.shield(self._future)

    def close(self) -> None:
        """Disable every control (the answer stays readable)."""
        for button in self.buttons:
            button.disabled = True
        if self.text is not None:
            self.text.disabled = True

    def _typed(self, typed: str, chosen: bool) -> None:
        # A click may arrive on a subshell's thread: settle on the loop.
        self._loop.call_soon_threadsafe(self._read, typed, chosen)

    def _read(self, typed: str, chosen: bool) -> None:
        if chosen:
            self._settle(PersonAnswer(action="accept", value=typed))
            return
        answer = self.question.read(typed)
        if isinstance(answer, PersonAnswer):
            self._settle(answer)
        else:
            self.message.value = f"<i>{html.escape(answer)}</i>"

    def _settle(self, answer: PersonAnswer) -> None:
        if not self._future.done():
            self._future.set_result(answer)
