"""``%%chat`` and ``DshChat``: the kernel's conversation with a model.

The cell is the user's message to the kernel's default :class:`Chat`; the
next ``%%chat`` goes on with the same conversation. A cell magic cannot
await, so (like ``%%call``) a cleanup input transformer rewrites a
``%%chat`` cell into ``await __dsh_nb_chat_magic__(line, body)``, and
IPython's autoawait runs the loop in the cell: the text streams in, cards
and approval prompts update while it runs, and the stop button cancels it.

The API key is read from the environment variable ``DshChat.api_key_env``
names, when a client is built; it is never stored in the notebook and
never printed.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from traitlets import CaselessStrEnum, Unicode

from dsh_nb.models.providers import PROVIDER_TABLE, PROVIDERS
from dsh_nb.notebook.magics.args import argument, magic_arguments, parse_argstring
from dsh_nb.notebook.magics.rewrite import Helper, cell_call, remove_magics
from dsh_nb.notebook.transactional import TransactionalConfigurable
from dsh_nb.tools.audit.secrets import clean_secret
from dsh_nb.tools.running.sigint import PassOn, SigintHandler

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.models.chat import Chat
    from dsh_nb.models.view import ChatReply
    from dsh_nb.notebook.state import KernelState

__all__ = ["HELPER", "ChatMagics", "DshChat", "install", "kernel_chat"]

HELPER = "__dsh_nb_chat_magic__"
_CELL = re.compile(r"%%chat(?P<rest>(?:[ \t].*)?)\Z", re.S)


class DshChat(TransactionalConfigurable):
    """Which model ``%%chat`` talks to (``%config DshChat``)."""

    model = Unicode(
        "",
        help="The model name the endpoint knows, e.g. 'deepseek-chat'.",
    ).tag(config=True)

    base_url = Unicode(
        None,
        allow_none=True,
        help=(
            "The API's base URL: https://api.deepseek.com, a local Ollama, "
            "vLLM, llama.cpp or LM Studio server; None for the provider's own."
        ),
    ).tag(config=True)

    provider = CaselessStrEnum(
        list(PROVIDER_TABLE),
        default_value=PROVIDERS[0],
        help=(
            "'openai' for every Chat Completions endpoint (OpenAI, DeepSeek, "
            "vLLM, Ollama, llama.cpp, LM Studio); 'anthropic' for Messages."
        ),
    ).tag(config=True)

    api_key_env = Unicode(
        None,
        allow_none=True,
        help=(
            "The name of the environment variable that holds the API key; "
            "None means the provider's own: "
            + ", ".join(f"{r.key_variable} ({n})" for n, r in PROVIDER_TABLE.items())
            + "."
        ),
    ).tag(config=True)

    def key_variable(self) -> str:
        """The environment variable the key is read from."""
        return self.api_key_env or PROVIDER_TABLE[self.provider].key_variable


@magics_class
class ChatMagics(Magics):
    """Talk to a model from a cell; its tool calls run the kernel's pipeline."""

    def __init__(
        self, shell: InteractiveShell, state: KernelState, config: DshChat
    ) -> None:
        super().__init__(shell)
        self.state = state
        self.settings = config
        self.conversation: Chat | None = None
        # The SDK client outlives a conversation: ``--new`` keeps it while
        # the settings it was built for hold (building one loads the CA
        # bundle for TLS: tens of milliseconds each ``%%chat --new``).
        self._client: Any = None
        self._built_for: tuple[Any, ...] | None = None
        self._task: Any = None

    @magic_arguments()
    @argument("--model", metavar="M", help="the model for this cell")
    @argument("--new", action="store_true", help="start a new conversation")
    @argument("--max-steps", metavar="N", type=int, help="requests before stopping")
    @cell_magic
    def chat(self, line: str, cell: str) -> None:
        """Send the cell to the model; its tool calls run as live cards.

        The next ``%%chat`` continues the conversation; ``--new`` starts
        over. Configure the endpoint with ``%config DshChat.model``,
        ``DshChat.base_url``, ``DshChat.provider`` and
        ``DshChat.api_key_env`` (the *name* of the variable holding the key).

        Examples
        --------
        ::

            %config DshChat.model = "deepseek-chat"
            %config DshChat.base_url = "https://api.deepseek.com"
            %config DshChat.api_key_env = "DEEPSEEK_API_KEY"

            %%chat --max-steps 4
            What is 2 + 3? Use the add tool.
        """
        # Reached only when the cell cannot await (autoawait off): run the
        # loop as a task; its output lands in this cell while it runs.
        coro = self.chat_in_cell(line, cell)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            coro.close()
            raise UsageError(
                "%%chat needs a running event loop (a Jupyter kernel) and %autoawait on"
            ) from None
        self._task = asyncio.ensure_future(coro)

    def kernel_chat(self, new: bool = False) -> Chat:
        """The kernel's default chat, (re)built when the settings change."""
        from dsh_nb.models.chat import Chat, make_client

        cfg = self.settings
        variable = cfg.key_variable()
        key = clean_secret(os.environ.get(variable) or "")
        if not key and not cfg.base_url:
            raise UsageError(
                f"no API key: set the {variable} environment variable (or "
                "%config DshChat.api_key_env = 'NAME'), or point "
                "%config DshChat.base_url at a local server"
            )
        wanted = (cfg.provider, cfg.base_url, variable, key)
        chat = self.conversation
        if chat is None or new or chat.provider != cfg.provider:
            chat = Chat(
                cfg.model or None,
                provider=cfg.provider,
                runner=self.state.runner,
                agent=self.state.agent,
            )
            self.conversation = chat
        if self._built_for != wanted:
            # A local server may not check keys; the SDKs insist on one.
            self._client = make_client(cfg.provider, cfg.base_url, key or "unused")
            self._built_for = wanted
        chat._client = self._client
        chat.model = cfg.model
        return chat

    async def chat_in_cell(self, line: str, cell: str) -> None:
        """What a rewritten ``%%chat`` cell awaits."""
        args = parse_argstring(self.chat, line, "%%chat")  # type: ignore[misc]
        text = cell.strip()
        if not text:
            raise UsageError("%%chat needs a message in the cell body")
        if args.max_steps is not None and args.max_steps < 1:
            raise UsageError(f"--max-steps must be 1 or more, not {args.max_steps}")
        chat = self.kernel_chat(new=args.new)
        if args.model:
            chat.model = args.model
        if not chat.model:
            raise UsageError(
                "no model: %config DshChat.model = 'NAME', or %%chat --model NAME"
            )
        from dsh_nb.notebook.chatview import CellChatView

        chat.view = CellChatView(self.state, chat.agent)
        before = len(chat.messages)
        saved = chat.max_steps
        if args.max_steps is not None:
            chat.max_steps = args.max_steps
        stop = _StopButton()
        try:
            with stop:
                reply: ChatReply = await chat.send(text)
        except asyncio.CancelledError:
            if not stop.pressed:
                raise
            # One line, not the SDK's twenty frames; UsageError also stops
            # the cells queued after this one, as an interrupt does.
            raise UsageError(
                "stopped: the model's reply was interrupted; the conversation "
                "is as it was before this cell"
                if len(chat.messages) <= before
                else "stopped: interrupted; the calls that had not finished "
                "were answered as cancelled"
            ) from None
        finally:
            chat.max_steps = saved
        del reply


class _StopButton:
    """While a chat runs, the stop button (SIGINT) cancels its task.

    ipykernel's own handler for an awaiting cell only wakes the loop on the
    next message, so without this a chat waiting on the network ignores the
    button. ``call_soon_threadsafe`` wakes the loop. A pending approval
    puts its own handler on top for as long as it waits (and consumes that
    interrupt); ours comes back after it.
    """

    def __init__(self) -> None:
        self.pressed = False
        self._handler = SigintHandler(self._press)
        self._task: asyncio.Task[Any] | None = None

    def __enter__(self) -> _StopButton:
        self._task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()
        self._handler.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._handler.__exit__(*exc)

    def _press(self, _pass_on: PassOn) -> None:
        # A signal handler runs between any two bytecodes: never stop inline.
        self.pressed = True
        task = self._task
        if task is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(task.cancel)


def kernel_chat() -> Chat | None:
    """The conversation ``%%chat`` keeps in this kernel (None before one).

    Save it for :func:`dsh_nb.replay`: ``json.dump(kernel_chat().messages, f)``.
    """
    from IPython.core.getipython import get_ipython

    shell = get_ipython()
    magics = shell.magics_manager.registry.get("ChatMagics") if shell else None
    return getattr(magics, "conversation", None)


def install(shell: InteractiveShell, state: KernelState) -> Callable[[], None]:
    """Add ``DshChat``, ``%%chat`` and its rewrite; return the undo."""
    config = DshChat.from_shell(shell)
    configurables: list[Any] = shell.configurables
    configurables.append(config)
    magics = ChatMagics(shell, state, config)
    shell.register_magics(magics)
    helper = Helper(shell, HELPER, magics.chat_in_cell)

    def transform(lines: list[str]) -> list[str]:
        """The cleanup transform: ``%%chat`` cell -> an awaited helper call."""
        return cell_call(lines, _CELL, helper)

    shell.input_transformers_cleanup.append(transform)

    def undo() -> None:
        remove_magics(shell, magics)
        if transform in shell.input_transformers_cleanup:
            shell.input_transformers_cleanup.remove(transform)
        helper.remove()
        for i, existing in enumerate(configurables):
            if existing is config:
                del configurables[i]
                break

    return undo
