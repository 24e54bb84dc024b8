"""One evaluation case: what the model is asked, and what it should do.

A case is plain, frozen data so a suite can live in a notebook cell, be
loaded from a benchmark (``dsh_nb.evals.bfcl``) and be run many times, by
several variants, concurrently, without one run changing what another sees.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from dsh_nb.evals.expect import Expectation, ExpectedCall, ExpectedCalls, NoCall
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.registry import ToolRegistry

__all__ = ["Case"]

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _text(content: object, where: str) -> str:
    """A message's text: a str, or OpenAI's list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                text = part.get("text")
                if isinstance(text, str):
                    parts.append(text)
                    continue
            raise ValueError(f"{where}: only text parts are supported, got {part!r}")
        return "".join(parts)
    raise ValueError(f"{where}: content must be a str or text parts, not {content!r}")


@dataclass(frozen=True, init=False)
class Case:
    """``Case(prompt, *, expect, tools=None, id=None, system=None, tags=())``.

    ``prompt`` is the user's message, or a list of messages in OpenAI wire
    form whose system messages become the system prompt and whose last
    message is the user's. ``tools`` are the tools this case offers (for
    suites where each case brings its own); None means the run's registry.
    ``display_names`` maps a tool's wire name to the name a report shows
    (BFCL's ``math_factorial`` is ``math.factorial``).
    """

    prompt: str | tuple[Mapping[str, Any], ...]
    expect: Expectation
    tools: tuple[ToolDefinition, ...] | ToolRegistry | None = None
    id: str | None = None
    system: str | None = None
    tags: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    display_names: Mapping[str, str] = field(default_factory=lambda: _EMPTY)

    def __init__(
        self,
        prompt: str | Sequence[Mapping[str, Any]],
        *,
        expect: Expectation,
        tools: Sequence[ToolDefinition] | ToolRegistry | None = None,
        id: str | None = None,
        system: str | None = None,
        tags: Sequence[str] = (),
        meta: Mapping[str, Any] | None = None,
        display_names: Mapping[str, str] | None = None,
    ) -> None:
        put = object.__setattr__
        put(self, "prompt", _check_prompt(prompt))
        if not isinstance(expect, (ExpectedCall, ExpectedCalls, NoCall)):
            raise TypeError(
                "Case(expect=...) takes call(...), calls(...) or no_call(), "
                f"not {type(expect).__name__}"
            )
        put(self, "expect", expect)
        put(self, "tools", _check_tools(tools))
        if id is not None and not isinstance(id, str):
            raise TypeError(f"Case(id=...) must be a str, not {id!r}")
        put(self, "id", id)
        if system is not None and not isinstance(system, str):
            raise TypeError(f"Case(system=...) must be a str, not {system!r}")
        put(self, "system", system)
        if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
            raise TypeError(f"Case(tags=...) must be a list of str, not {tags!r}")
        put(self, "tags", tuple(tags))
        put(self, "meta", MappingProxyType(dict(meta or {})))
        names = dict(display_names or {})
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
            raise TypeError("Case(display_names=...) maps str wire names to str names")
        put(self, "display_names", MappingProxyType(names))
        self.messages()  # a prompt whose last message is not the user's fails here

    def messages(self) -> tuple[str | None, list[dict[str, Any]], str]:
        """``(system_prompt, prior_messages, user_text)`` for a fresh conversation."""
        if isinstance(self.prompt, str):
            return self.system, [], self.prompt
        systems = [self.system] if self.system else []
        rest: list[dict[str, Any]] = []
        for i, message in enumerate(self.prompt):
            if message["role"] in ("system", "developer"):
                systems.append(_text(message.get("content"), f"prompt[{i}]"))
            else:
                rest.append(copy.deepcopy(dict(message)))
        if not rest or rest[-1]["role"] != "user":
            raise ValueError(
                "Case(prompt=...): the last non-system message must be the user's"
            )
        last = rest.pop()
        user = _text(last.get("content"), f"prompt[{len(self.prompt) - 1}]")
        return ("\n\n".join(systems) if systems else None), rest, user

    def __repr__(self) -> str:
        shown = (
            self.prompt
            if isinstance(self.prompt, str)
            else f"<{len(self.prompt)} messages>"
        )
        return f"Case({shown!r}, expect={self.expect.describe()}, id={self.id!r})"


def _check_prompt(prompt: object) -> str | tuple[Mapping[str, Any], ...]:
    if isinstance(prompt, str):
        return prompt
    if not isinstance(prompt, Sequence) or isinstance(prompt, (bytes, bytearray)):
        raise TypeError(
            "Case(prompt=...) is a str or a list of messages, "
            f"not {type(prompt).__name__}"
        )
    messages = tuple(prompt)
    if not messages:
        raise ValueError("Case(prompt=...) needs at least one message")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in _ROLES:
            raise ValueError(
                f"Case(prompt=...)[{i}] must be a message with a role in "
                f"{sorted(_ROLES)}, not {message!r}"
            )
    return tuple(MappingProxyType(copy.deepcopy(dict(m))) for m in messages)


def _check_tools(tools: object) -> tuple[ToolDefinition, ...] | ToolRegistry | None:
    if tools is None or isinstance(tools, ToolRegistry):
        return tools
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        raise TypeError(
            "Case(tools=...) is a list of tool definitions or a ToolRegistry, "
            f"not {type(tools).__name__}"
        )
    items = tuple(tools)
    for item in items:
        if not isinstance(item, ToolDefinition):
            raise TypeError(
                f"Case(tools=...) holds tool definitions, not {type(item).__name__}"
            )
    return items
