"""``Chat``: one conversation with a model whose tool calls run the pipeline.

Each ``send`` is one turn on the agent's session log. A step sends the
conversation and ``registry.schemas(agent)`` in the provider's format; the
step's tool calls then run **concurrently** through ``registry.execute`` as
the chat's agent, and their results go back **in call order**, followed by
the step's buffered ``additionalContext``. Steps repeat until the model
answers in text alone, or ``max_steps`` is reached (a visible stop).

The conversation is never left half-written: an assistant message with
tool calls is appended together with one result for each of its calls, or
not at all. A failed request leaves the messages as they were before the
step (and takes back the user's message if nothing was answered), so a
re-run is clean; an interrupt settles unfinished calls as cancelled.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from dsh_nb.models import policy_notes
from dsh_nb.models.providers import (
    PROVIDER_TABLE,
    PROVIDERS,
    ProviderAdapter,
    provider_row,
)
from dsh_nb.models.usage import Usage
from dsh_nb.models.view import ChatReply, ChatView, Completion, GuardedView
from dsh_nb.models.wire import ParsedCall
from dsh_nb.tools.audit import journal
from dsh_nb.tools.audit.secrets import add_secret, clean_secret, redact
from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.runner import CallAnswer, CallRunner, DoorCall, answer_calls
from dsh_nb.tools.values.execution import ToolExecutionResult

__all__ = ["PROVIDERS", "Chat", "describe_error", "make_client"]

CANCELLED = "Error: the call was cancelled before it finished"


def describe_error(exc: BaseException) -> str:
    """One line a person can act on, for a failed model request.

    Every registered secret is redacted: an SDK's error may quote the key
    (a refused header), and a server may quote it in its 401 body.
    """
    return redact(_describe(exc))


def _describe(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        message = getattr(exc, "message", None) or str(exc)
        hint = {
            401: " (check the API key)",
            403: " (the key may not have access)",
            404: " (check the model name and base_url)",
            429: " (rate limited; try again later)",
        }.get(status, "")
        return f"Error: the model API answered {status}{hint}: {message}"
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__ or exc.__context__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text} ({cause})"
    return f"Error: the model request failed: {type(exc).__name__}: {text}"


def make_client(provider: str, base_url: str | None, api_key: str | None) -> Any:
    """The provider's official async SDK client, with a clear error if the
    SDK is missing (``pip install 'dsh_nb[models]'``).

    The key is stripped (a key read from a file ends in a newline, which
    a header refuses) and registered as a secret, redacted wherever text
    is shown or stored.
    """
    api_key = clean_secret(api_key) if isinstance(api_key, str) else api_key
    add_secret(api_key)
    return provider_row(provider).make_client(base_url, api_key)


class Chat:
    """One conversation with a model, its tool calls run through the pipeline.

    Parameters
    ----------
    model
        The model name the endpoint knows (``"gpt-4.1"``, ``"deepseek-chat"``).
    client
        A configured ``openai.AsyncOpenAI`` or ``anthropic.AsyncAnthropic``;
        built from ``base_url`` and ``api_key`` when None.
    provider
        A row of :data:`~dsh_nb.models.providers.PROVIDER_TABLE`:
        ``"openai"`` (every Chat Completions endpoint) or ``"anthropic"``.
    system
        The system prompt; the approval service's section is added to it.
    tools
        Names of the registry tools the model may call; all when None.
    max_steps
        Requests per ``send`` before the loop stops (visibly).
    registry
        Where calls run; the runner's, or a new empty ``ToolRegistry``,
        when None.
    runner
        The :class:`~dsh_nb.tools.runner.CallRunner` every call goes
        through (the notebook's draws a card per call); a plain one over
        ``registry`` when None.

    Examples
    --------
    >>> chat = Chat("deepseek-chat", client=AsyncOpenAI(base_url=...))  # doctest: +SKIP
    >>> reply = await chat.send("What is 2 + 3? Use the add tool.")  # doctest: +SKIP
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        client: Any = None,
        provider: str = "openai",
        system: str | None = None,
        tools: Sequence[str] | None = None,
        max_steps: int = 10,
        registry: ToolRegistry | None = None,
        runner: CallRunner | None = None,
        agent: Agent | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = True,
        view: ChatView | None = None,
        request_options: dict[str, Any] | None = None,
    ) -> None:
        provider_row(provider)
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive int, not {max_steps!r}")
        if tools is not None and (
            isinstance(tools, str) or not all(isinstance(t, str) for t in tools)
        ):
            raise TypeError("tools must be a list of tool names (or None for all)")
        self.model = model or ""
        self.provider = provider
        self.system = system
        self.tools = None if tools is None else tuple(tools)
        self.max_steps = max_steps
        if runner is not None:
            if registry is not None and registry is not runner.registry:
                raise ValueError(
                    "Chat(registry=..., runner=...): the runner runs calls "
                    "through another registry; pass one of them"
                )
            registry = runner.registry
        self.registry = registry if registry is not None else ToolRegistry()
        self.runner = runner if runner is not None else CallRunner(self.registry)
        self.agent = agent if agent is not None else Agent("chat", cwd=os.getcwd())
        self.stream = stream
        self.view: ChatView = view if view is not None else ChatView()
        self.messages: list[dict[str, Any]] = []
        self.step_usage: list[Usage] = []
        self._client = client
        self._base_url = base_url
        self._api_key = clean_secret(api_key) if isinstance(api_key, str) else None
        add_secret(self._api_key)
        # A client built by the caller carries its own key.
        add_secret(getattr(client, "api_key", None))
        self._options = dict(request_options or {})
        self._adapter: ProviderAdapter | None = None
        self._system_prompt: str | None = None
        self._narrator = policy_notes.PolicyNarrator()
        self._sending = False

    # --- what a caller reads --------------------------------------------------

    @property
    def usage(self) -> Usage:
        """Tokens of every request so far, summed."""
        total = Usage()
        for step in self.step_usage:
            total = total + step
        return total

    @property
    def client(self) -> Any:
        """The SDK client (built on first use)."""
        if self._client is None:
            self._client = make_client(self.provider, self._base_url, self._api_key)
        return self._client

    @property
    def system_prompt(self) -> str:
        """The system prompt as sent: ``system`` plus the approval section."""
        if self._system_prompt is None:
            section = policy_notes.prompt_section(self.registry.approval, self.agent)
            parts = [p for p in (self.system, section) if p]
            self._system_prompt = "\n\n".join(parts)
        return self._system_prompt

    def reset(self) -> None:
        """Forget the conversation (the next send starts a new one)."""
        self.messages.clear()
        self._system_prompt = None
        self._narrator = policy_notes.PolicyNarrator()

    def __repr__(self) -> str:
        return (
            f"<Chat {self.provider} {self.model!r} {len(self.messages)} messages, "
            f"{self.usage.total_tokens} tokens>"
        )

    # --- the loop ---------------------------------------------------------------

    def _get_adapter(self) -> ProviderAdapter:
        if self._adapter is None or self._adapter.client is not self.client:
            row = PROVIDER_TABLE[self.provider]
            self._adapter = row.make_adapter(self.client, request_options=self._options)
        return self._adapter

    def _guarded(self) -> GuardedView:
        view = self.view
        return view if isinstance(view, GuardedView) else GuardedView(view)

    def _schemas(self) -> list[Any]:
        schemas = self.registry.schemas(self.agent)
        if self.tools is None:
            return list(schemas)
        wanted = set(self.tools)
        return [s for s in schemas if s["name"] in wanted]

    async def send(self, text: str) -> ChatReply:
        """Send one user message and run the loop until the model is done.

        Returns a :class:`ChatReply`; failures are in ``reply.error`` (and
        shown by the view), never raised. An interrupt or a cancellation
        propagates after the conversation and the turn are closed.
        """
        if not isinstance(text, str):
            raise TypeError(f"send() takes the message text, not {type(text).__name__}")
        if not self.model:
            raise ValueError("Chat has no model; pass Chat(model=...)")
        if self._sending:
            raise RuntimeError(
                "this Chat is already sending a message; await that send() "
                "first (a conversation has one turn at a time)"
            )
        adapter = self._get_adapter()
        session = self.agent.session
        opened = journal.enter_turn(session)
        self._sending = True
        start = len(self.messages)
        adapter.new_question(self.messages)
        self.messages.append(adapter.user_message(text))
        step_usage: list[Usage] = []
        try:
            reply = await self._loop(adapter, start, step_usage)
        finally:
            self._sending = False
            journal.exit_turn(session, opened)
        self._guarded().end(reply)
        return reply

    async def _loop(
        self, adapter: ProviderAdapter, start: int, step_usage: list[Usage]
    ) -> ChatReply:
        view = self._guarded()
        schemas = self._schemas()
        tools = adapter.tools(schemas)
        offered = frozenset(s["name"] for s in schemas)
        system = self.system_prompt
        completion: Completion | None = None
        for step in range(1, self.max_steps + 1):
            notice = self._narrator.notice(self.registry.approval, self.agent)
            if notice is not None:
                adapter.add_notice(self.messages, notice)
                view.notice(notice, kind="policy")
            view.begin_step(step)
            before = len(self.messages)
            try:
                completion = await adapter.complete(
                    model=self.model,
                    system=system,
                    messages=self.messages,
                    tools=tools,
                    stream=self.stream,
                    view=view,
                )
            except Exception as exc:  # noqa: BLE001 - a failed request is a message
                return self._failed(view, exc, step, start, before, step_usage)
            except BaseException:
                self._abandon(view, "interrupted")
                self._rewind(start, before)
                raise
            step_usage.append(completion.usage)
            self.step_usage.append(completion.usage)
            if not completion.calls:
                self.messages.append(completion.message)
                view.end_step(step, completion.usage)
                stop = (
                    "length" if completion.finish in ("length", "max_tokens") else "end"
                )
                return self._reply(completion, stop, step, step_usage)
            answers = await self._run_calls(adapter, completion, offered)
            view.end_step(step, completion.usage)
            reason = _stop_reason(completion.calls, answers)
            if reason is not None:
                text = f"Stopped: {reason}. Send another message to go on."
                view.notice(text, kind="stop")
                return self._reply(completion, "stopped", step, step_usage, text)
        text = (
            f"Stopped after {self.max_steps} steps (max_steps); the model still "
            "wanted to call tools. Send another message to go on."
        )
        view.notice(text, kind="stop")
        return self._reply(completion, "max-steps", self.max_steps, step_usage, text)

    def _reply(
        self,
        completion: Completion | None,
        stop: str,
        steps: int,
        step_usage: list[Usage],
        error: str | None = None,
    ) -> ChatReply:
        total = Usage()
        for u in step_usage:
            total = total + u
        return ChatReply(
            text=completion.text if completion is not None else "",
            stop=stop,
            steps=steps,
            usage=total,
            message=completion.message if completion is not None else None,
            error=error,
            step_usage=tuple(step_usage),
        )

    def _rewind(self, start: int, before: int) -> None:
        # Nothing answered yet: take the user's message back too, so the
        # same cell can simply be run again.
        del self.messages[start if before == start + 1 else before :]

    def _abandon(self, view: GuardedView, reason: str) -> None:
        """The step failed: journal the calls it announced, then tell the view."""
        announced = [
            DoorCall(name=c.name, arguments=c.arguments, wire_id=c.call_id)
            for c in view.announced
        ]
        self.runner.abandon(announced, agent=self.agent, reason=reason)
        view.abandon_calls(reason)

    def _failed(
        self,
        view: GuardedView,
        exc: Exception,
        step: int,
        start: int,
        before: int,
        step_usage: list[Usage],
    ) -> ChatReply:
        text = describe_error(exc)
        self._abandon(view, text)
        self._rewind(start, before)
        view.notice(text, kind="error")
        return self._reply(None, "error", step, step_usage, text)

    async def _run_calls(
        self, adapter: ProviderAdapter, completion: Completion, offered: frozenset[str]
    ) -> list[CallAnswer | None]:
        """Run a reply's calls; only the tools this request offered may run."""
        calls = completion.calls
        view = self._guarded()
        answers: list[CallAnswer | None] = [None] * len(calls)
        try:
            await answer_calls(
                self.runner,
                [
                    DoorCall(
                        name=c.name,
                        arguments=c.arguments,
                        wire_id=c.call_id,
                        error=c.error,
                    )
                    for c in calls
                ],
                agent=self.agent,
                door="chat",
                offered=offered,
                views=[view.call_view(c) for c in calls],
                into=answers,
            )
        finally:
            # Appended whatever happened: every call gets its answer.
            done: list[ToolExecutionResult | str] = [
                CANCELLED if a is None else a.result for a in answers
            ]
            self.messages.append(completion.message)
            self.messages.extend(adapter.results(calls, done))
        return answers


def _stop_reason(
    calls: Sequence[ParsedCall], answers: Sequence[CallAnswer | None]
) -> str | None:
    """Stop when an approval was cancelled (an interrupt, a timeout, the
    cell run again): the person wants the loop to stop, not the denial sent
    on for the model to work around."""
    for call, answer in zip(calls, answers, strict=True):
        if answer is not None and answer.outcome.approval == "cancelled":
            return f"an approval for {call.name!r} was cancelled"
    return None
