"""The approval service's model-facing parts (contract §4.6 item 6).

A model plans better when it knows whether asking for approval is worth
it. The service contributes a section of the system prompt (``never``: a
fixed sentence plus a marker; ``ask``: the marker alone; no agent or no
service: nothing), and a narrator that tells the model, at most once per
step, when the effective policy is no longer the one it was last told.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from dsh_nb.tools.pipeline.approval import effective_policy

if TYPE_CHECKING:
    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.pipeline.approval import ApprovalService

__all__ = ["NEVER_SENTENCE", "PolicyNarrator", "policy_marker", "prompt_section"]

NEVER_SENTENCE: Final = (
    "Tool calls that need the user's approval are rejected without asking "
    "the user; prefer tools that need no approval."
)


def policy_marker(policy: str) -> str:
    """The marker that says which policy the model was told."""
    return f'<approval-policy value="{policy}"/>'


def prompt_section(service: ApprovalService | None, agent: Agent | None) -> str:
    """The system prompt's approval section for ``agent`` ("" if none)."""
    if service is None or agent is None:
        return ""
    policy = effective_policy(service, agent.session)
    if policy == "never":
        return f"{NEVER_SENTENCE}\n{policy_marker(policy)}"
    return policy_marker(policy)


class PolicyNarrator:
    """Remember what the model was told; say so once when it changes.

    ``told`` is the policy of the last request the model saw; ``_mark`` is
    how many session events existed then (the "request header"), so an
    ``approval/policy`` event after it is the user's doing.
    """

    __slots__ = ("_mark", "told")

    def __init__(self) -> None:
        self.told: str | None = None
        self._mark = 0

    def notice(self, service: ApprovalService | None, agent: Agent) -> str | None:
        """The notice to send before this step's request, or None.

        Call once per step; it also records the request as told.
        """
        session = agent.session
        if service is None:
            return None
        current = effective_policy(service, session)
        told, self.told = self.told, current
        mark, self._mark = self._mark, len(session)
        if told is None or told == current:
            return None
        last = _last_index(agent, "approval/policy")
        cause = (
            "changed by the user"
            if last is not None and last >= mark
            else "changed by the operator/config"
        )
        return f'The approval policy changed from "{told}" to "{current}" ({cause}).'


def _last_index(agent: Agent, type_: str) -> int | None:
    events = agent.session.events
    for index in range(len(events) - 1, -1, -1):
        if events[index]["type"] == type_:
            return index
    return None
