"""``DshConfig``: the extension's settings, a traitlets Configurable.

Set them with ``%config DshConfig.approval_policy = "never"`` in a cell, or
``c.DshConfig.approval_policy = "never"`` in ``ipython_config.py``; list them
with ``%config DshConfig``. The extension reacts to changes while it runs.

Setting a value is a transaction: a value the trait or its validator
rejects (``"bogus"``, ``float("inf")``, ``-5``) leaves the previous value,
and what depends on it (the timeout policy, the approval policy), in place.
The rejection is one line on stderr, and the value is struck from the
shell's config too, so ``%reload_ext`` and later calls never trip on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from traitlets import Bool, CaselessStrEnum, Float, Int, TraitError, observe, validate

from dsh_nb.notebook.transactional import TransactionalConfigurable
from dsh_nb.tools.audit.resultsize import (
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MAX_RESULT_ROWS,
)
from dsh_nb.tools.pipeline.approval import set_approval_policy
from dsh_nb.tools.running.abort import is_positive_finite

if TYPE_CHECKING:
    from dsh_nb.cards import CardLimits
    from dsh_nb.tools.audit.session import SessionLog
    from dsh_nb.tools.registry import ToolRegistry

__all__ = ["DshConfig"]


class DshConfig(TransactionalConfigurable):
    """Settings of the dsh_nb kernel extension (``%config DshConfig``)."""

    approval_policy = CaselessStrEnum(
        ["ask", "never"],
        default_value="ask",
        help=(
            "What an Ask decision does: 'ask' routes it to the approval "
            "prompt; 'never' rejects it without asking."
        ),
    ).tag(config=True)

    headless_outcome = CaselessStrEnum(
        ["unavailable", "allowed-once", "rejected", "cancelled"],
        default_value="unavailable",
        help=(
            "The approval outcome when no frontend can show the prompt "
            "(nbval, nbclient, a script). 'unavailable' fails closed; a demo "
            "notebook may choose 'allowed-once'."
        ),
    ).tag(config=True)

    frontend = CaselessStrEnum(
        ["auto", "interactive", "stdin", "headless"],
        default_value="auto",
        help=(
            "How approvals and tools' questions reach a person: buttons "
            "('interactive'), a line on the kernel's stdin where the frontend "
            "allows input ('stdin': VS Code, Colab, classic Notebook), "
            "headless_outcome at once ('headless'), or per request ('auto')."
        ),
    ).tag(config=True)

    approval_timeout = Float(
        None,
        allow_none=True,
        help=(
            "Seconds an approval prompt waits before settling as 'cancelled'; "
            "None waits until answered."
        ),
    ).tag(config=True)

    default_timeout_ms = Float(
        None,
        allow_none=True,
        help=(
            "Deadline in milliseconds for tools that declare no timeout; None "
            "lets such tools run without one."
        ),
    ).tag(config=True)

    trace = Bool(
        True,
        help=(
            "Show each call's trace (which listener, guard or wrapper decided "
            "what, and how long each stage took) in its card."
        ),
    ).tag(config=True)

    max_call_depth = Int(
        16,
        min=1,
        help=(
            "How deep calls may nest (a tool whose body calls dsh_nb.call is "
            "one level deeper); a deeper call ends with CALL_DEPTH_EXCEEDED."
        ),
    ).tag(config=True)

    max_output_lines = Int(
        40, min=1, help="Terminal lines a card shows before 'show all'."
    ).tag(config=True)
    max_output_chars = Int(
        200_000, min=1, help="Characters a card keeps of terminal output or a block."
    ).tag(config=True)
    max_diff_lines = Int(
        2_000, min=1, help="Diff rows a card renders before truncating."
    ).tag(config=True)
    max_diff_bytes = Int(
        2_000_000, min=1, help="Size of one file's text above which it is not diffed."
    ).tag(config=True)
    max_result_bytes = Int(
        DEFAULT_MAX_RESULT_BYTES,
        min=1,
        help=(
            "Bytes of a result's content the card and the session log keep; "
            "a bigger result is still returned whole to the code that called."
        ),
    ).tag(config=True)

    max_result_rows = Int(
        DEFAULT_MAX_RESULT_ROWS,
        min=1,
        help=(
            "Rows of a table (a DataFrame, an array, an iterator's items) a "
            "tool's result gives the model; the JSON says how many there were."
        ),
    ).tag(config=True)

    # Not a trait: the live session a policy change is recorded on. A class
    # default, because loading config fires observers inside __init__.
    session: SessionLog | None = None
    registry: ToolRegistry | None = None  # the kernel's, for max_result_rows

    @validate("approval_timeout", "default_timeout_ms")
    def _positive(self, proposal: Any) -> float | None:
        value = proposal["value"]
        if value is not None and not is_positive_finite(value):
            name = proposal["trait"].name
            raise TraitError(
                f"DshConfig.{name} must be a positive finite number or None, "
                f"not {value!r}"
            )
        return value  # type: ignore[no-any-return]

    @observe("approval_policy")
    def _policy_changed(self, change: Any) -> None:
        # The service default was fixed at load; a change is a session override.
        if self.session is not None:
            set_approval_policy(self.session, change["new"])

    @observe("max_result_rows")
    def _rows_bound_changed(self, change: Any) -> None:
        # The bound's home is the registry, which every door's call reads.
        if self.registry is not None:
            self.registry.max_result_rows = change["new"]

    @observe("max_result_bytes")
    def _result_bound_changed(self, change: Any) -> None:
        # The bound's home is the session, which the journal and the card read.
        if self.session is not None:
            self.session.max_result_bytes = change["new"]

    def card_limits(self) -> CardLimits:
        """The card size limits these settings describe."""
        from dsh_nb.cards import CardLimits

        return CardLimits(
            max_output_lines=self.max_output_lines,
            max_output_chars=self.max_output_chars,
            max_diff_lines=self.max_diff_lines,
            max_diff_bytes=self.max_diff_bytes,
        )
