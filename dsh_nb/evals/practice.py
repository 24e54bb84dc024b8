"""A practice model: a Python function plays the model, offline, with no key.

Teachers, students and Binder users have no API key, and a test suite
wants a model that answers the same way every time. A practice model is a
function from the request to a reply::

    def model(request: PracticeRequest) -> str | list | Turn | ApiError:
        if "weather" in request.prompt:
            return [("get_weather", {"city": "Paris"})]
        return "I don't know."

    report = await run_eval(cases, model=PracticeModel(model), registry=reg)

``request.messages`` is the conversation in one neutral form whatever the
provider (``role`` ``system``/``user``/``assistant``/``tool``, ``content``
text, an assistant's ``calls``), ``request.tools`` the tools offered
(``name``, ``description``, ``parameters``), ``request.prompt`` the last
user message and ``request.step`` which request of the turn this is. The
reply is text (a ``str``), tool calls (``(name, arguments)`` pairs: a dict
is sent as JSON, a ``str`` verbatim, so invalid JSON can be practised), or
a :class:`~dsh_nb.models.scripted.Turn` / ``ApiError`` for full control.

A :class:`PracticeModel` is also an SDK client in shape (it answers each
provider's request method, ``chat.completions.create`` or
``messages.create``, in-process, rendered in the provider's own wire
format and read back by the SDK's own types; the provider table,
:mod:`dsh_nb.models.providers`, says how),
so the ``Chat`` loop, the pipeline and a recording see what they would see
from a server. Two recipes are built on it: :func:`oracle` answers each
case's expectation, :func:`noisy` makes the mistakes you choose, at the
rates you choose (:mod:`dsh_nb.evals.recipes`).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dsh_nb.models.providers import Create, Provider, sdk_shaped
from dsh_nb.models.scripted import ApiError, ToolCallSpec, Turn

__all__ = ["PracticeModel", "PracticeReply", "PracticeRequest"]

#: What a practice function may return (see the module doc).
PracticeReply = str | Sequence[tuple[str, Any]] | Turn | ApiError


@dataclass(frozen=True, slots=True, kw_only=True)
class PracticeRequest:
    """One request to the practice model, in a provider-neutral form."""

    model: str
    provider: str
    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def prompt(self) -> str:
        """The text of the last user message."""
        for message in reversed(self.messages):
            if message["role"] == "user":
                return str(message["content"])
        return ""

    @property
    def system(self) -> str:
        """The system prompt ("" if none)."""
        return "\n\n".join(
            str(m["content"]) for m in self.messages if m["role"] == "system"
        )

    @property
    def step(self) -> int:
        """1 for the first request of a turn, 2 after the first tool results."""
        step = 1
        for message in reversed(self.messages):
            if message["role"] == "user":
                break
            step += message["role"] == "assistant"
        return step

    @property
    def results(self) -> list[Mapping[str, Any]]:
        """The tool results since the model's last message (``content``,
        ``is_error``)."""
        out: list[Mapping[str, Any]] = []
        for message in reversed(self.messages):
            if message["role"] != "tool":
                break
            out.insert(0, message)
        return out

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered, in order."""
        return [str(t["name"]) for t in self.tools]


class PracticeModel:
    """A function playing the model; pass it as ``run_eval(model=...)``.

    Parameters
    ----------
    answer
        ``(PracticeRequest) -> reply`` (sync or async); see the module doc.
    name
        The model name requests carry (and the report shows).
    """

    def __init__(
        self, answer: Callable[[PracticeRequest], Any], *, name: str = "practice"
    ) -> None:
        if not callable(answer):
            raise TypeError(
                "PracticeModel takes a function (request) -> reply, "
                f"not {type(answer).__name__}"
            )
        if not isinstance(name, str) or not name:
            raise ValueError(f"a practice model needs a non-empty name, not {name!r}")
        self.answer = answer
        self.name = name
        self.requests = 0
        sdk_shaped(self, self._create)

    def __repr__(self) -> str:
        return f"<PracticeModel {self.name!r}: {self.requests} requests answered>"

    def _create(self, row: Provider) -> Create:
        """``row``'s request method: answer, in its wire, as its SDK would."""

        async def create(**kwargs: Any) -> Any:
            if kwargs.get("stream") is True:
                raise ValueError(
                    "a practice model answers whole responses; use Chat(stream=False)"
                )
            self.requests += 1
            adapter = row.adapter_class()
            messages, tools = adapter.read_request(kwargs)
            request = PracticeRequest(
                model=str(kwargs.get("model", "")),
                provider=row.name,
                messages=tuple(messages),
                tools=tuple(tools),
                raw=dict(kwargs),
            )
            reply = self.answer(request)
            if inspect.isawaitable(reply):
                reply = await reply
            turn = _as_turn(reply, self.requests)
            model = str(kwargs.get("model", self.name))
            return row.parse_response(adapter.reply_body(turn, model, self.requests))

        return create


class PracticeError(Exception):
    """A practice model answered an error (``ApiError``), as an SDK would."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


def _as_turn(reply: Any, seq: int) -> Turn:
    if isinstance(reply, Turn):
        return reply
    if isinstance(reply, ApiError):
        raise PracticeError(reply.message, reply.status)
    if isinstance(reply, str):
        return Turn(text=reply)
    if reply is None:
        return Turn(text="")
    if isinstance(reply, Sequence):
        specs = []
        for index, item in enumerate(reply):
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise TypeError(
                    "a practice model's calls are (name, arguments) pairs, "
                    f"not {item!r}"
                )
            name, arguments = item
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            specs.append(
                ToolCallSpec(
                    name=str(name), arguments=text, call_id=f"call_{seq}_{index + 1}"
                )
            )
        return Turn(tool_calls=tuple(specs))
    raise TypeError(
        "a practice model returns text, a list of (name, arguments) calls, "
        f"a Turn or an ApiError; not {type(reply).__name__}"
    )
