"""An ``ask`` in a served registry becomes an MCP elicitation to the client.

A module's policies and listeners may answer ``Ask``; served outside a
notebook there is no button to press, so the server mounts an answerer on
the registry's approval seam (creating the seam if the module has none).
The answerer needs the MCP request the call came in on: the server puts it
in a context variable before the call's task starts, and the task, the
pipeline and the approval sub-task inherit it.

* The client declared form elicitation and the request can still reach
  it: an ``elicitation/create`` request on the call's own stream, a form
  with no fields (the question is the message). A 2026-07-28 client gets
  the same form as an ``input_required`` round instead (:mod:`.rounds`). ``accept`` is
  ``allowed-once``, ``decline`` is ``rejected``, ``cancel`` is
  ``cancelled``; an error or a malformed answer fails closed
  (``unavailable``).
* Otherwise the headless outcome applies, ``unavailable`` by default: the
  call is denied, as the seam denies with no answerer. The core's denial
  says only that no approval channel is available; the MCP door adds why
  (:func:`why_unasked`): the client declared no elicitation support, or a
  stateless server never saw what it declared, and which server option
  (``--without-elicitation``) chooses what such a call gets.

The audit pair (``approval/asked``, ``approval/decided``) is the seam's, so
the journal records the outcome exactly as the notebook's does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.mcp.question import question
from dsh_nb.tools import Disposer
from dsh_nb.tools.errors import error_message
from dsh_nb.tools.pipeline.approval import OUTCOMES, ApprovalService

if TYPE_CHECKING:
    from mcp import types
    from mcp.server.context import ServerRequestContext

    from dsh_nb.mcp.rounds import Channel
    from dsh_nb.tools.pipeline.approval import ApprovalOutcome, ApprovalRequest
    from dsh_nb.tools.registry import ToolRegistry
    from dsh_nb.tools.values.outcome import ToolOutcome

__all__ = [
    "HEADLESS",
    "ServedCall",
    "answer_by_elicitation",
    "can_elicit",
    "declares_elicitation",
    "explain_unasked",
    "mount_approvals",
    "served_call",
    "serving",
    "why_unasked",
]

_log = logging.getLogger(__name__)

#: ``--without-elicitation`` choices and the outcome each stands for.
HEADLESS: Final[Mapping[str, ApprovalOutcome]] = {
    "deny": "unavailable",
    "reject": "rejected",
    "allow": "allowed-once",
}
_ACTIONS: Final[Mapping[str, ApprovalOutcome]] = {
    "accept": "allowed-once",
    "decline": "rejected",
    "cancel": "cancelled",
}


@dataclass(frozen=True, slots=True)
class ServedCall:
    """The MCP request one served call came in on.

    ``channel`` is set for a 2026-07-28 client that declared elicitation:
    questions go back as an ``input_required`` round (:mod:`.rounds`).
    """

    ctx: ServerRequestContext[Any, Any]
    arguments: object
    channel: Channel | None = None
    #: Why an ``ask`` of this call got the headless outcome (the answerer
    #: fills it; the door tells the client).
    unasked: list[str] = field(default_factory=list)


_CALL: ContextVar[ServedCall | None] = ContextVar("dsh_nb_mcp_call", default=None)


def served_call() -> ServedCall | None:
    """The MCP request the running call came in on, if a server set it."""
    return _CALL.get()


@contextmanager
def serving(
    ctx: ServerRequestContext[Any, Any],
    arguments: object,
    channel: Channel | None = None,
) -> Iterator[None]:
    """Make ``ctx`` the request of the calls started inside the block."""
    token = _CALL.set(ServedCall(ctx, arguments, channel))
    try:
        yield
    finally:
        _CALL.reset(token)


def declares_elicitation(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client declared form elicitation (in either era)."""
    capabilities = ctx.session.client_capabilities
    declared = capabilities.elicitation if capabilities is not None else None
    if declared is None:
        return False
    # An empty ``elicitation: {}`` means form mode (the spec's default).
    return not (declared.form is None and declared.url is not None)


def can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client declared form elicitation and can be asked now."""
    return (
        declares_elicitation(ctx)
        and bool(ctx.session.can_send_request)
        and ctx.request_id is not None
    )


def why_unasked(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The sentence added to an ``unavailable`` denial of this request.

    It names the client's side (what it declared) and the server's option,
    so the person reading the denial knows which of the two to change.
    """
    option = (
        "The server's --without-elicitation option (deny, reject or allow) "
        "sets what a call that needs approval gets from such a client."
    )
    handshake = not ctx.protocol_version.startswith("2026")
    if handshake and ctx.session.client_params is None:
        # No initialize seen on this request's session: a stateless server.
        return (
            "This server keeps no session (stateless), so it does not know "
            "whether the MCP client supports elicitation and cannot ask it. " + option
        )
    if not declares_elicitation(ctx):
        return (
            "The MCP client declared no elicitation support, so the server "
            "cannot ask it for approval. " + option
        )
    return None


def explain_unasked(
    result: types.CallToolResult, served: ServedCall | None, outcome: ToolOutcome
) -> types.CallToolResult:
    """Add why the client was not asked to a call denied as ``unavailable``.

    The core's text stays as the contract words it; the sentence follows it
    in the same text block, which is what a client shows and a model reads.
    """
    if (
        served is None
        or not served.unasked
        or outcome.approval != "unavailable"
        or outcome.stage != "approval"
        or not result.content
    ):
        return result
    from mcp import types

    first = result.content[0]
    if not isinstance(first, types.TextContent):
        return result
    told = first.model_copy(update={"text": f"{first.text}. {served.unasked[-1]}"})
    return result.model_copy(update={"content": [told, *result.content[1:]]})


def answer_by_elicitation(
    headless: ApprovalOutcome = "unavailable",
) -> Callable[[ApprovalRequest, Callable[[], Awaitable[object]]], Any]:
    """The answerer: ask the calling client, else answer ``headless``."""
    if headless not in OUTCOMES:
        raise ValueError(f"headless outcome must be one of {sorted(OUTCOMES)}")

    async def answer(
        request: ApprovalRequest, next_: Callable[[], Awaitable[object]]
    ) -> ApprovalOutcome:
        call = _CALL.get()
        if call is not None and call.channel is not None:
            outcome = await call.channel.ask(question(request, call.arguments))
            return outcome if outcome in OUTCOMES else "unavailable"
        if call is None:
            return headless
        if not can_elicit(call.ctx):
            reason = why_unasked(call.ctx)
            if reason is not None and headless == "unavailable":
                call.unasked.append(reason)
            return headless
        ctx = call.ctx
        try:
            result = await ctx.session.elicit_form(
                question(request, call.arguments),
                {"type": "object", "properties": {}},
                related_request_id=ctx.request_id,
            )
        except Exception as exc:  # noqa: BLE001 - a failed ask fails closed
            _log.warning(
                "elicitation for %s failed: %s", request.tool_name, error_message(exc)
            )
            return "unavailable"
        return _ACTIONS.get(str(getattr(result, "action", "")), "unavailable")

    return answer


def mount_approvals(
    registry: ToolRegistry, headless: ApprovalOutcome = "unavailable"
) -> Disposer:
    """Answer the registry's ``ask`` decisions through its MCP clients.

    The module's own answerers, if it set up a service, come first; this
    one answers what they pass on.
    """
    created = registry.approval is None
    service = registry.approval if registry.approval is not None else ApprovalService()
    if not callable(getattr(service, "on_request", None)):
        # A service written to the contract (``request`` only) answers
        # every ask itself; there is no answerer chain to join.
        _log.warning("the registry's approval service takes no answerers")
        return Disposer(lambda: None)
    registry.approval = service
    dispose = service.on_request(answer_by_elicitation(headless))

    def undo() -> None:
        dispose()
        if created and registry.approval is service:
            registry.approval = None

    return Disposer(undo)
