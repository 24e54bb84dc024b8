"""``ctx.ask`` in a notebook: a small form under the call's card.

The kernel runner's hearer (:class:`NotebookTalk`) answers a tool's
question the way the notebook reaches its person for approvals: where the
frontend delivers a click while the cell runs, a form of widgets under the
call's card (one field per property of the question's schema, then
*Answer* and *Decline*); headless, a decline. Waiting is one ``await`` on a
future of the kernel's loop, settled from whichever thread the click
arrives on; the call's abort ends it as ``cancel`` (the context does that).

A question of one value (a scalar, a choice) goes through the notebook's
person channel, :func:`dsh_nb.notebook.asking.ask_person`: buttons or a
text box, the kernel's stdin where clicks cannot arrive (VS Code, Colab),
nobody headless. A form of several fields (a pydantic model) or a
multi-select is drawn here as widgets, and declined where widgets cannot
be answered (:func:`reach_person`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.notebook.frontend import is_interactive
from dsh_nb.tools.context import Answer, SamplingUnavailable

if TYPE_CHECKING:
    import ipywidgets as widgets

    from dsh_nb.notebook.host import KernelHost
    from dsh_nb.tools.context import Question, SampleRequest, ToolContext

__all__ = [
    "ANSWER_LABEL",
    "DECLINE_LABEL",
    "NotebookTalk",
    "QuestionForm",
    "reach_person",
]

ANSWER_LABEL: Final = "Answer"
DECLINE_LABEL: Final = "Decline"


def reach_person(state: KernelHost) -> str:
    """How this kernel reaches its person now: ``"widgets"`` or ``"headless"``."""
    mode = getattr(state.config, "frontend", "auto")
    try:
        return "widgets" if is_interactive(mode) else "headless"
    except ValueError:
        return "widgets" if is_interactive("auto") else "headless"


def _field(name: str, schema: dict[str, Any]) -> widgets.Widget:
    import ipywidgets as widgets

    label = str(schema.get("title") or ("" if name == "value" else name))
    default = schema.get("default")
    style = {"description_width": "initial"}
    common: dict[str, Any] = {"description": label, "style": style}
    choices = schema.get("enum")
    titled = schema.get("oneOf")
    if choices is not None or titled is not None:
        options: list[tuple[str, Any]] = (
            [(str(c), c) for c in choices]
            if choices is not None
            else [
                (str(o.get("title", o.get("const"))), o.get("const"))
                for o in titled or ()
            ]
        )
        value = default if default is not None else options[0][1]
        return widgets.Dropdown(
            options=options, value=value, description=label, style=style
        )
    if schema.get("type") == "array":
        items = schema.get("items") or {}
        raw = items.get("enum") or [o.get("const") for o in items.get("anyOf", [])]
        return widgets.SelectMultiple(
            options=[(str(c), c) for c in raw], value=tuple(default or ()), **common
        )
    kind = schema.get("type")
    if kind == "boolean":
        return widgets.Checkbox(value=bool(default), description=label, indent=False)
    if kind == "integer":
        return widgets.IntText(value=int(default or 0), description=label, style=style)
    if kind == "number":
        return widgets.FloatText(
            value=float(default or 0), description=label, style=style
        )
    return widgets.Text(value=str(default or ""), description=label, style=style)


def _words(value: str, label: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys((value.lower(), label.lower())))


def _one_line_question(question: Question) -> Any:
    """The person channel's question for a one-value form, else None."""
    from dsh_nb.cards.question import Choice
    from dsh_nb.cards.question import Question as PersonQuestion

    prop = question.schema.get("properties", {}).get("value")
    if not question.single or not isinstance(prop, dict):
        return None
    if "enum" in prop or "oneOf" in prop:
        pairs = (
            [(str(c), str(c)) for c in prop["enum"]]
            if "enum" in prop
            else [
                (str(o["const"]), str(o.get("title", o["const"])))
                for o in prop["oneOf"]
            ]
        )
        choices = tuple(
            Choice(
                value=v,
                label=label,
                words=tuple(dict.fromkeys((v.lower(), label.lower()))),
            )
            for v, label in pairs
        )
        return PersonQuestion(text=question.message, choices=choices)
    kind = prop.get("type")
    if kind == "boolean":
        choices = (
            Choice(value="true", label="yes", words=("y", "yes")),
            Choice(value="false", label="no", words=("n", "no")),
        )
        return PersonQuestion(text=question.message, choices=choices)
    parse = {"integer": int, "number": float, "string": str}.get(str(kind))
    if parse is None:
        return None  # a multi-select: the widget form
    return PersonQuestion(text=question.message, parse=parse)


class QuestionForm:
    """The widgets of one question, and the future its buttons settle."""

    def __init__(self, question: Question, loop: asyncio.AbstractEventLoop) -> None:
        import ipywidgets as widgets

        self.loop = loop
        self.future: asyncio.Future[Answer] = loop.create_future()
        properties = question.schema.get("properties", {})
        self.fields = {name: _field(name, spec) for name, spec in properties.items()}
        answer = widgets.Button(description=ANSWER_LABEL, button_style="primary")
        decline = widgets.Button(description=DECLINE_LABEL)
        answer.on_click(lambda _button: self.answer())
        decline.on_click(lambda _button: self.decline())
        message = widgets.Label(value=question.message)
        self.widget = widgets.VBox(
            [message, *self.fields.values(), widgets.HBox([answer, decline])]
        )

    def content(self) -> dict[str, Any]:
        out = {}
        for name, field in self.fields.items():
            value = field.value
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    def answer(self) -> None:
        """What *Answer* does: accept with the fields' values."""
        self._settle(Answer("accept", self.content()))

    def decline(self) -> None:
        """What *Decline* does."""
        self._settle(Answer("decline"))

    def _settle(self, answer: Answer) -> None:
        def settle() -> None:
            if not self.future.done():
                self.future.set_result(answer)

        self.loop.call_soon_threadsafe(settle)


class NotebookTalk:
    """The kernel runner's hearer: the notebook's person answers questions,
    and the kernel's ``DshChat`` model (after an approval) a tool's samples."""

    def __init__(self, state: KernelHost) -> None:
        self._state = state
        #: The person channel (``asking.ask_person``), set when the
        #: extension loads (a parameter, not an import: ``asking`` sits
        #: above the kernel state this runner belongs to).
        self.ask_one: Callable[..., Awaitable[Any]] | None = None
        #: ``ctx.sample``'s answer (``sampling.KernelSampler.sample``), set
        #: when the extension loads, for the same reason.
        self.sample_one: Callable[..., Awaitable[str]] | None = None

    async def sample(self, ctx: ToolContext, request: SampleRequest) -> str:
        if self.sample_one is None:
            raise SamplingUnavailable(
                f'tool "{ctx.name}" asked the model, but dsh_nb is not loaded '
                "in this kernel"
            )
        return await self.sample_one(ctx, request)

    async def ask(self, ctx: ToolContext, question: Question) -> Answer:
        one = _one_line_question(question)
        if one is not None and self.ask_one is not None:
            # One value: the notebook's person channel (buttons or a text
            # box, the kernel's stdin where clicks cannot arrive, headless).
            got = await self.ask_one(one, signal=ctx.signal)
            if got.action == "accept":
                return Answer("accept", {"value": got.value})
            return Answer("cancel" if got.action == "cancel" else "decline")
        if reach_person(self._state) == "headless":
            return Answer("decline")
        form = QuestionForm(question, asyncio.get_running_loop())
        live = self._state.live_calls.get(ctx.call_id)
        if live is None:  # no card to put the form under: nobody sees it
            return Answer("decline")
        live.show_prompt(form.widget)
        try:
            return await form.future
        finally:
            live.clear_prompt()
