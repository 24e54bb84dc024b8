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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_nb.notebook import current
from dsh_nb.notebook.current import current_state
from dsh_nb.notebook.listeners import (
    guard,
    on_result,
    post_execute,
    pre_execute,
    remove_listener,
)
from dsh_nb.notebook.state import KernelState
from dsh_nb.tools.runner import DoorCall, answer_calls
from dsh_nb.tools.values.execution import ToolExecutionResult

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.registry import ToolRegistry

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
    "unload_ipython_extension",
]


def load_ipython_extension(ip: InteractiveShell) -> None:
    """Install the registry, magics, config and approval prompt (idempotent)."""
    previous = current.loaded()
    if previous is not None:
        if previous.shell is ip:
            return
        unload_ipython_extension(previous.shell)
    from dsh_nb.notebook import magics, redaction
    from dsh_nb.notebook.config import DshConfig

    config = DshConfig.from_shell(ip)
    state = KernelState(ip, config)
    try:
        state.install()
        configurables: list[Any] = ip.configurables
        configurables.append(config)
        state.disposers.append(lambda: _remove(configurables, config))
        state.disposers.append(redaction.install(ip))
        state.disposers.append(magics.install(ip, state))
        state.disposers.append(_install_approvals(state))
    except BaseException:
        state.dispose()
        raise
    current.set_loaded(state)


def _install_approvals(state: KernelState) -> Callable[[], object]:
    from dsh_nb.notebook import approvals
    from dsh_nb.notebook.approvalcomm import ApprovalChannel

    channel = ApprovalChannel()
    close = channel.install(state.shell)
    stdin, unfollow = _kernel_stdin(state.shell)
    state.stdin = stdin
    remove = approvals.install(state, notices=channel, stdin=stdin)
    _tools_ask_people(state)

    def dispose() -> None:
        remove()  # cancels what is pending first, then the page is told
        close()
        unfollow()

    return dispose


def _tools_ask_people(state: KernelState) -> None:
    """A tool's one-value ``ctx.ask`` goes through the person channel too,
    and its ``ctx.sample`` to ``DshChat``'s model after an approval."""
    from dsh_nb.notebook.asking import ask_person
    from dsh_nb.notebook.sampling import KernelSampler
    from dsh_nb.notebook.toolask import NotebookTalk

    talk = state.runner.talk
    if isinstance(talk, NotebookTalk):
        talk.ask_one = ask_person
        talk.sample_one = KernelSampler(state).sample


def _kernel_stdin(shell: object) -> tuple[Any, Callable[[], None]]:
    """The kernel's stdin channel, following cells; none outside a kernel."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None or getattr(kernel, "stdin_socket", None) is None:
        return None, lambda: None
    from dsh_nb.notebook.stdin import KernelStdin

    stdin = KernelStdin(kernel)
    return stdin, stdin.install(shell)


def _remove(items: list[Any], item: object) -> None:
    for i, existing in enumerate(items):
        if existing is item:
            del items[i]
            return


def unload_ipython_extension(ip: InteractiveShell | None) -> None:
    """Dispose everything :func:`load_ipython_extension` installed."""
    state = current.loaded()
    if state is None or state.shell is not ip:
        return
    current.set_loaded(None)
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
    live = current_state().runner.new_call(name, args).show()
    return await live


async def dispatch(
    message_or_tool_calls: object, *, agent: Agent | None = None
) -> list[dict[str, Any]]:
    """Run a model's tool calls; return what to send back, in call order.

    The calls run concurrently, as ``Chat`` runs them (one function
    answers both), each with its own live card.

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
    from dsh_nb.models import wire  # the model's message forms, at first use

    state = current_state()
    anthropic = wire.message_format(message_or_tool_calls) == "anthropic"
    calls = wire.parse_tool_calls(message_or_tool_calls)
    answers = await answer_calls(
        state.runner,
        [
            DoorCall(
                name=c.name, arguments=c.arguments, wire_id=c.call_id, error=c.error
            )
            for c in calls
        ],
        agent=agent or state.agent,
        door="dispatch",
    )
    ids = [c.call_id for c in calls]
    results = [a.result for a in answers if a is not None]
    if anthropic:
        return wire.anthropic_answers(ids, results)
    return wire.openai_answers(ids, results)
