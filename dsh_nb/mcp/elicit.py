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
  call is denied, as the seam denies with no answerer.

The audit pair (``approval/asked``, ``approval/decided``) is the seam's, so
the journal records the outcome exactly as the notebook's does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.mcp.question import question
from dsh_nb.tools import Disposer
from dsh_nb.tools.errors import error_message
from dsh_nb.tools.pipeline.approval import OUTCOMES, ApprovalService

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from dsh_nb.mcp.rounds import Channel
    from dsh_nb.tools.pipeline.approval import ApprovalOutcome, ApprovalRequest
    from dsh_nb.tools.registry import ToolRegistry

__all__ = [
    "HEADLESS",
    "ServedCall",
    "answer_by_elicitation",
    "can_elicit",
    "declares_elicitation",
    "mount_approvals",
    "served_call",
    "serving",
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
        if call is None or not can_elicit(call.ctx):
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
