"""One evaluation case: what the model is asked, and what it should do.

A case is plain, frozen data so a suite can live in a notebook cell, be
loaded from a benchmark (``dsh_nb.evals.bfcl``) and be run many times, by
several variants, concurrently, without one run changing what another sees.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from dsh_nb.evals.answers import Answers, check_answers
from dsh_nb.evals.conversation import ConversationExpect, Turn
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

    A **conversation** is a prompt that is a list of user turns (``str`` or
    :class:`~dsh_nb.evals.conversation.Turn`); its ``expect`` is a list with
    one expectation a turn (or None), ``end_state`` a predicate over the
    tools' state after the last turn, ``final`` one over the last reply's
    text, and ``tools`` may be a factory called once per trial (see
    :mod:`dsh_nb.evals.conversation`).

    ``answers`` answers the questions a tool asks (``ctx.ask``) during the
    case's trials: a dict from the question's message text to its answer,
    or a callable ``answers(question)``; an unmatched question is a
    ``decline`` (see :mod:`dsh_nb.evals.answers`).
    """

    prompt: str | tuple[Mapping[str, Any], ...] | tuple[Turn, ...]
    expect: Expectation | ConversationExpect
    tools: tuple[ToolDefinition, ...] | ToolRegistry | Callable[[], Any] | None = None
    id: str | None = None
    system: str | None = None
    tags: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    display_names: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    answers: Answers | None = None

    def __init__(
        self,
        prompt: str | Sequence[Mapping[str, Any]] | Sequence[str | Turn],
        *,
        expect: Any = None,
        tools: Any = None,
        id: str | None = None,
        system: str | None = None,
        tags: Sequence[str] = (),
        meta: Mapping[str, Any] | None = None,
        display_names: Mapping[str, str] | None = None,
        end_state: Any = None,
        final: Callable[[str], object] | None = None,
        answers: Any = None,
    ) -> None:
        put = object.__setattr__
        turns = _turns(prompt)
        if turns is not None:
            put(self, "prompt", turns)
            put(
                self,
                "expect",
                ConversationExpect.build(len(turns), expect, end_state, final),
            )
            if callable(tools) and not isinstance(tools, ToolRegistry):
                put(self, "tools", tools)
            else:
                put(self, "tools", _check_tools(tools))
        else:
            if end_state is not None or final is not None:
                raise ValueError(
                    "Case(end_state=..., final=...) are for conversations: "
                    "pass the prompt as a list of user turns"
                )
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
        put(self, "answers", check_answers(answers))
        self.messages()  # a prompt whose last message is not the user's fails here

    @property
    def turns(self) -> tuple[Turn, ...] | None:
        """A conversation's user turns; None for a one-request case."""
        if self.prompt and isinstance(self.prompt, tuple):
            if isinstance(self.prompt[0], Turn):
                return self.prompt
        return None

    @property
    def factory(self) -> Callable[[], Any] | None:
        """The per-trial tools factory of a conversation, else None."""
        tools = self.tools
        if tools is None or isinstance(tools, (ToolRegistry, tuple)):
            return None
        return tools

    def messages(self) -> tuple[str | None, list[dict[str, Any]], str]:
        """``(system_prompt, prior_messages, user_text)`` for a fresh conversation."""
        if isinstance(self.prompt, str):
            return self.system, [], self.prompt
        turns = self.turns
        if turns is not None:
            return self.system, [], turns[0].text
        systems = [self.system] if self.system else []
        rest: list[dict[str, Any]] = []
        for i, message in enumerate(self.prompt):
            assert isinstance(message, Mapping)
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
            else f"<{len(self.prompt)} turns>"
            if self.turns is not None
            else f"<{len(self.prompt)} messages>"
        )
        return f"Case({shown!r}, expect={self.expect.describe()}, id={self.id!r})"


def _turns(prompt: object) -> tuple[Turn, ...] | None:
    """A conversation's turns, when ``prompt`` is a list of str or Turn."""
    if isinstance(prompt, (str, bytes)) or not isinstance(prompt, Sequence):
        return None
    items = list(prompt)
    if not items or not all(isinstance(t, (str, Turn)) for t in items):
        if any(isinstance(t, (str, Turn)) for t in items):
            raise TypeError(
                "Case(prompt=...): a conversation is a list of user turns "
                "(str or Turn); messages and turns cannot be mixed"
            )
        return None
    return tuple(t if isinstance(t, Turn) else Turn(t) for t in items)


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
