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

A :class:`PracticeModel` is also an SDK client in shape (it answers
``chat.completions.create`` and ``messages.create`` in-process, rendered
in the provider's own wire format and read back by the SDK's own types),
so the ``Chat`` loop, the pipeline and a recording see what they would see
from a server. Two recipes are built on it: :func:`oracle` answers each
case's expectation, :func:`noisy` makes the mistakes you choose, at the
rates you choose (:mod:`dsh_nb.evals.recipes`).
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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
        self.chat = _Namespace(completions=_Namespace(create=self._openai))
        self.messages = _Namespace(create=self._anthropic)

    def __repr__(self) -> str:
        return f"<PracticeModel {self.name!r}: {self.requests} requests answered>"

    async def _openai(self, **kwargs: Any) -> Any:
        from openai.types.chat import ChatCompletion

        from dsh_nb.models.scripted import openai_json

        turn = await self._turn("openai", kwargs)
        body = openai_json(turn, str(kwargs.get("model", self.name)), self.requests)
        return ChatCompletion.model_validate(body)

    async def _anthropic(self, **kwargs: Any) -> Any:
        from anthropic.types import Message

        from dsh_nb.models.scripted import anthropic_json

        turn = await self._turn("anthropic", kwargs)
        body = anthropic_json(turn, str(kwargs.get("model", self.name)), self.requests)
        return Message.model_validate(body)

    async def _turn(self, provider: str, kwargs: Mapping[str, Any]) -> Turn:
        if kwargs.get("stream") is True:
            raise ValueError(
                "a practice model answers whole responses; use Chat(stream=False)"
            )
        self.requests += 1
        request = _request(provider, kwargs)
        reply = self.answer(request)
        if inspect.isawaitable(reply):
            reply = await reply
        return _as_turn(reply, self.requests)


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


def _arguments(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text  # as sent: the model practised invalid JSON


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping)
        )
    return ""


_ERROR = re.compile(r"^\s*Error\b")


def _request(provider: str, kwargs: Mapping[str, Any]) -> PracticeRequest:
    messages: list[dict[str, Any]] = []
    tools: list[dict[str, Any]] = []
    if provider == "openai":
        for m in kwargs.get("messages") or ():
            role, content = m.get("role"), _text(m.get("content"))
            if role in ("system", "developer"):
                messages.append({"role": "system", "content": content})
            elif role == "tool":
                error = bool(_ERROR.match(content))
                messages.append({"role": "tool", "content": content, "is_error": error})
            elif role == "assistant":
                calls = [
                    {
                        "id": c["id"],
                        "name": c["function"]["name"],
                        "arguments": _arguments(c["function"].get("arguments")),
                    }
                    for c in m.get("tool_calls") or ()
                ]
                messages.append({"role": role, "content": content, "calls": calls})
            else:
                messages.append({"role": "user", "content": content})
        for t in kwargs.get("tools") or ():
            f = t.get("function") or {}
            tools.append(
                {
                    "name": f.get("name"),
                    "description": f.get("description", ""),
                    "parameters": f.get("parameters") or {},
                }
            )
    else:
        system = kwargs.get("system")
        if system:
            messages.append({"role": "system", "content": _text(system)})
        for m in kwargs.get("messages") or ():
            _anthropic_message(m, messages)
        for t in kwargs.get("tools") or ():
            tools.append(
                {
                    "name": t.get("name"),
                    "description": t.get("description", ""),
                    "parameters": t.get("input_schema") or {},
                }
            )
    return PracticeRequest(
        model=str(kwargs.get("model", "")),
        provider=provider,
        messages=tuple(messages),
        tools=tuple(tools),
        raw=dict(kwargs),
    )


def _anthropic_message(m: Mapping[str, Any], out: list[dict[str, Any]]) -> None:
    role, content = m.get("role"), m.get("content")
    if isinstance(content, str):
        out.append({"role": str(role), "content": content, "calls": []})
        return
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content or ():
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            calls.append(
                {"id": block["id"], "name": block["name"], "arguments": block["input"]}
            )
        elif kind == "tool_result":
            out.append(
                {
                    "role": "tool",
                    "content": _text(block.get("content")),
                    "is_error": bool(block.get("is_error")),
                }
            )
    if role == "assistant":
        out.append({"role": "assistant", "content": "".join(texts), "calls": calls})
    elif texts:
        out.append({"role": "user", "content": "".join(texts)})


class _Namespace:
    def __init__(self, **attrs: Any) -> None:
        self.__dict__.update(attrs)
