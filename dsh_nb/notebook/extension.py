"""The kernel extension: load, unload, the registry, calls and dispatch.

``%load_ext dsh_nb`` creates one :class:`KernelState`: the kernel-wide
``ToolRegistry`` (with an ``ApprovalService`` and the ``TimeoutPolicy``), the
default ``Agent`` whose session log records every call, the ``%config``-able
:class:`~dsh_nb.notebook.config.DshConfig`, the magics and the approval
prompt. ``%unload_ext`` disposes all of it. Importing this module does not
import IPython, so ``registry()``, ``call()`` and ``dispatch()`` also work in
a plain script (with no cards).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_nb.models import wire
from dsh_nb.notebook.listeners import (
    guard,
    on_result,
    post_execute,
    pre_execute,
    remove_listener,
)
from dsh_nb.notebook.replay import replay
from dsh_nb.notebook.state import KernelState
from dsh_nb.tools.execution import ToolExecutionResult

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.tools.registry import ToolRegistry
    from dsh_nb.tools.session import Agent

__all__ = [
    "KernelState",
    "call",
    "current_state",
    "dispatch",
    "guard",
    "load_ipython_extension",
    "on_result",
    "post_execute",
    "pre_execute",
    "remove_listener",
    "registry",
    "replay",
    "unload_ipython_extension",
]

_state: KernelState | None = None
_script: KernelState | None = None


def _running_shell() -> InteractiveShell | None:
    if "IPython" not in sys.modules:
        return None
    from IPython.core.getipython import get_ipython

    shell: InteractiveShell | None = get_ipython()
    return shell


def current_state() -> KernelState:
    """The kernel's state, loading the extension into a running IPython.

    Outside IPython a module-level state serves scripts: same registry
    semantics, no displays.
    """
    global _script
    if _state is not None:
        return _state
    shell = _running_shell()
    if shell is not None:
        # Through the manager, so %unload_ext knows what was loaded.
        manager: Any = shell.extension_manager
        manager.load_extension(__name__)
        if _state is not None:
            return _state
    if _script is None:
        from dsh_nb.notebook.config import DshConfig

        _script = KernelState(None, DshConfig())
        _script.install()
    return _script


def load_ipython_extension(ip: InteractiveShell) -> None:
    """Install the registry, magics, config and approval prompt (idempotent)."""
    global _state
    if _state is not None:
        if _state.shell is ip:
            return
        unload_ipython_extension(_state.shell)
    from dsh_nb.notebook import magics, redaction
    from dsh_nb.notebook.config import DshConfig

    config = DshConfig(parent=ip)
    state = KernelState(ip, config)
    try:
        state.install()
        configurables: list[Any] = ip.configurables
        configurables.append(config)
        state.disposers.append(lambda: _remove(configurables, config))
        state.disposers.append(redaction.install(ip))
        state.disposers.append(magics.install(ip, state))
        state.disposers.append(_install_chat(ip, state))
        state.disposers.append(_install_approvals(state))
    except BaseException:
        state.dispose()
        raise
    _state = state


def _install_chat(ip: InteractiveShell, state: KernelState) -> Callable[[], object]:
    from dsh_nb.notebook import chatmagic

    return chatmagic.install(ip, state)


def _install_approvals(state: KernelState) -> Callable[[], object]:
    from dsh_nb.notebook import approvals
    from dsh_nb.notebook.approvalcomm import ApprovalChannel

    channel = ApprovalChannel()
    close = channel.install(state.shell)
    remove = approvals.install(state, notices=channel)

    def dispose() -> None:
        remove()  # cancels what is pending first, then the page is told
        close()

    return dispose


def _remove(items: list[Any], item: object) -> None:
    for i, existing in enumerate(items):
        if existing is item:
            del items[i]
            return


def unload_ipython_extension(ip: InteractiveShell | None) -> None:
    """Dispose everything :func:`load_ipython_extension` installed."""
    global _state
    if _state is None or _state.shell is not ip:
        return
    state, _state = _state, None
    state.dispose()


def registry() -> ToolRegistry:
    """The kernel-wide registry that ``%%tool``, ``%call`` and ``call`` use."""
    return current_state().registry


async def call(name: str, /, **args: Any) -> ToolExecutionResult:
    """Run one tool call through the pipeline, shown as a live card.

    Examples
    --------
    >>> result = await dsh_nb.call("add", a=1, b=2)  # doctest: +SKIP
    >>> result.text  # doctest: +SKIP
    '3'
    """
    live = current_state().new_call(name, args).show()
    return await live


async def dispatch(
    message_or_tool_calls: object, *, agent: Agent | None = None
) -> list[dict[str, Any]]:
    """Run a model's tool calls in order; return what to send back.

    Parameters
    ----------
    message_or_tool_calls
        An OpenAI-style assistant message (a dict with ``tool_calls``, or an
        SDK object with ``.tool_calls``) or the list of tool calls itself;
        or an Anthropic assistant message (``content`` with ``tool_use``
        blocks, a dict or an SDK ``Message``) or its list of blocks.
    agent
        The scope the calls run as; the notebook's default agent if None.

    Returns
    -------
    list of dict
        OpenAI: one ``{"role": "tool", "tool_call_id", "content"}`` per
        call, then one ``{"role": "user"}`` message carrying the step's
        ``additionalContext``, if any call produced some. Anthropic: one
        ``tool_result`` block per call, then the context as ``text`` blocks;
        send them as the ``content`` of the next user message.
    """
    state = current_state()
    anthropic = wire.message_format(message_or_tool_calls) == "anthropic"
    answers: list[dict[str, Any]] = []
    results: list[ToolExecutionResult] = []
    for parsed in wire.parse_tool_calls(message_or_tool_calls):
        live = state.new_call(
            parsed.name, parsed.arguments, call_id=parsed.call_id, agent=agent
        ).show()
        answer: ToolExecutionResult | str
        if parsed.error is not None:
            live.fail_before_pipeline(parsed.error)
            answer = parsed.error
        else:
            answer = await live
            results.append(answer)
        answers.append(
            wire.tool_result_block(parsed.call_id, answer)
            if anthropic
            else wire.tool_message(parsed.call_id, answer)
        )
    if anthropic:
        answers.extend(wire.context_blocks(results))
    else:
        extra = wire.context_message(results)
        if extra is not None:
            answers.append(extra)
    return answers
