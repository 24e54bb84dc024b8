"""``ctx.sample`` in a notebook: the kernel's ``DshChat`` model, after a yes.

A tool that asks the model for help spends the user's money and sends
what it puts in the prompt to a provider, so in a notebook a sample is an
approval first, through the same service, answerers and channels as a
call's (buttons under the call's card, the kernel's stdin, the headless
outcome; the audit pair lands on the agent's log). The subject of that
approval is ``TOOL:sample`` (:func:`sample_subject`), a row of its own in
the policy table: ``%tool_policy allow TOOL:sample`` lets a tool sample
without asking, ``deny`` refuses at once, and *Allow for this session* on
the prompt adds the row for the session. The tool's own row does not
apply: allowing a tool to run is not allowing it to spend.

Allowed, the prompt goes to the model ``%config DshChat`` names (provider,
``base_url``, ``model``, the key in the variable ``api_key_env`` names) as
one request with no tools and no history: the kernel's ``%%chat``
conversation is not touched. The request and the reply are drawn in the
talk part of the call's card, bounded; the context journals them
(``tool/sample``, ``tool/sampled``). Anything that stops a sample (no
model configured, a denial, a failed request) reaches the tool as a
:class:`~dsh_nb.tools.SamplingUnavailable` that says why and what to set.
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.cards.talk import sample_lines
from dsh_nb.notebook.state import sample_subject
from dsh_nb.tools.audit.secrets import clean_secret
from dsh_nb.tools.context import LogLine, SamplingUnavailable
from dsh_nb.tools.pipeline.approval import ApprovalRequest, consult

if TYPE_CHECKING:
    from dsh_nb.notebook.magics.chat import DshChat
    from dsh_nb.notebook.state import KernelState
    from dsh_nb.tools.context import SampleRequest, ToolContext

__all__ = ["KernelSampler", "sample_subject"]

#: Characters of the prompt the approval question quotes.
ASKED_CHARS: Final = 300


def _quoted(prompt: str) -> str:
    one = " ".join(prompt.split())
    return one if len(one) <= ASKED_CHARS else one[:ASKED_CHARS] + "…"


class KernelSampler:
    """Answers ``ctx.sample`` for the kernel's calls (``NotebookTalk.sample``)."""

    def __init__(self, state: KernelState) -> None:
        self._state = state
        self._client: Any = None
        self._client_for: tuple[Any, ...] | None = None

    # --- what is configured ---------------------------------------------------

    def settings(self) -> DshChat | None:
        """The kernel's ``DshChat`` (the one ``%config DshChat`` changes)."""
        from dsh_nb.notebook.magics.chat import DshChat

        shell = self._state.shell
        for configurable in reversed(getattr(shell, "configurables", None) or ()):
            if isinstance(configurable, DshChat):
                return configurable
        return None

    def _model(self, tool: str) -> tuple[str, str, Any]:
        """The provider, model and SDK client, or why there are none."""
        cfg = self.settings()
        if cfg is None:
            raise SamplingUnavailable(
                f'tool "{tool}" asked the model, but %%chat is not set up in '
                "this kernel (%load_ext dsh_nb)"
            )
        if not cfg.model:
            raise SamplingUnavailable(
                f'tool "{tool}" asked the model, but none is configured: '
                "%config DshChat.model = 'NAME' (and DshChat.base_url, "
                "DshChat.api_key_env as for %%chat)"
            )
        variable = cfg.key_variable()
        key = clean_secret(os.environ.get(variable) or "")
        if not key and not cfg.base_url:
            raise SamplingUnavailable(
                f'tool "{tool}" asked the model, but there is no API key: set '
                f"the {variable} environment variable (or %config "
                "DshChat.api_key_env = 'NAME'), or point %config "
                "DshChat.base_url at a local server"
            )
        wanted = (cfg.provider, cfg.base_url, key)
        if self._client is None or self._client_for != wanted:
            from dsh_nb.models.chat import make_client

            # A local server may not check keys; the SDKs insist on one.
            self._client = make_client(cfg.provider, cfg.base_url, key or "unused")
            self._client_for = wanted
        return cfg.provider, cfg.model, self._client

    # --- one sample -----------------------------------------------------------

    async def sample(self, ctx: ToolContext, request: SampleRequest) -> str:
        """Approve, ask the model, draw both in the card; the reply's text."""
        provider, model, client = self._model(ctx.name)
        self._draw(ctx, sample_lines(f"asks the model ({model})", request.prompt))
        refused = await self._approve(ctx, request, model)
        if refused is not None:
            self._draw(ctx, [LogLine("warning", refused, "sample")])
            raise SamplingUnavailable(refused)
        from dsh_nb.models.chat import describe_error
        from dsh_nb.models.sampling import sample_text

        try:
            text = await sample_text(
                client,
                provider=provider,
                model=model,
                prompt=request.prompt,
                system=request.system,
                max_tokens=request.max_tokens,
            )
        except Exception as exc:  # noqa: BLE001 - the tool hears why, the kernel lives
            why = describe_error(exc).removeprefix("Error: ")
            self._draw(ctx, [LogLine("error", why, "sample")])
            raise SamplingUnavailable(why) from None
        self._draw(ctx, sample_lines("the model answered", text))
        return text

    async def _approve(
        self, ctx: ToolContext, request: SampleRequest, model: str
    ) -> str | None:
        """None when the sample may go out, else why it may not."""
        state = self._state
        subject = sample_subject(ctx.name)
        agent = ctx.agent
        entry = state.policy_for(subject, agent)
        if entry is not None and entry.policy == "allow":
            return None
        if entry is not None and entry.policy == "deny":
            return f'the model request of tool "{ctx.name}" is denied by %tool_policy'
        service = state.registry.approval
        if service is None or agent is None:
            return f'tool "{ctx.name}" asked the model, but nobody can approve it'
        reason = f'asks the model {model!r}: "{_quoted(request.prompt)}"'
        live = state.live_calls.get(ctx.call_id)
        with live.beside_call() if live is not None else nullcontext():
            decision = await consult(
                service,
                ApprovalRequest(
                    agent=agent,
                    tool_name=subject,
                    call_id=ctx.call_id,
                    reason=reason,
                    signal=ctx.signal,
                ),
            )
        outcome = getattr(decision, "outcome", decision)
        if outcome == "allowed-once":
            return None
        why = {
            "rejected": "was rejected",
            "cancelled": "was cancelled",
        }.get(
            str(outcome),
            "was not approved: nobody could be asked (in a run with nobody "
            "to ask, DshConfig.headless_outcome answers)",
        )
        return f'the model request of tool "{ctx.name}" {why}'

    def _draw(self, ctx: ToolContext, lines: list[LogLine]) -> None:
        live = self._state.live_calls.get(ctx.call_id)
        if live is None:
            return
        for line in lines:
            live.log(ctx, line)
