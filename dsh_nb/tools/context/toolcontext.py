"""``ToolContext``: a tool talks back while it runs, through whichever door.

The pipeline binds one context to each call for the length of its execute
stage (:mod:`~dsh_nb.tools.context.binding`); a signature tool receives it
by a parameter annotated ``ToolContext``, anything else inside the call by
``current_tool_context()``. What the context *means* is the door's: the
runner (:class:`~dsh_nb.tools.runner.CallRunner`) hands the pipeline the
call's *hearers* (its view, the door's talk, the runner's own), and the
context, which is the same for every door, does the rest:

* it throttles progress (at most one report per ``PROGRESS_EVERY_S``, the
  last one always arrives) and bounds log lines (``MAX_LINES`` a call, each
  at most ``MAX_LINE_CHARS``; then one "… N more lines");
* it journals what happened on the agent's log (``tool/progress``,
  ``tool/log``, ``tool/ask``, ``tool/answer``, ``tool/sample``,
  ``tool/sampled``);
* it hops to the loop thread, so a sync body on a worker thread may print
  and report progress, and hearers only ever run on the loop;
* it ends a pending ``ask`` or ``sample`` at once when the call's signal
  aborts.

A hearer is any object; each of ``progress(ctx, Progress)``,
``log(ctx, LogLine)``, ``async ask(ctx, Question) -> Answer`` and
``async sample(ctx, SampleRequest) -> str`` it has is used. Every hearer
hears progress and lines; the first that can ``ask`` (``sample``) is
asked. A hearer that raises is logged and skipped.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from dsh_nb.tools.context.forms import Form, form_of, schema_form
from dsh_nb.tools.context.values import (
    Answer,
    LogLine,
    Progress,
    Question,
    SampleRequest,
    SamplingUnavailable,
    level_of,
    python_level,
)
from dsh_nb.tools.errors import error_message
from dsh_nb.tools.running.abort import AbortError

if TYPE_CHECKING:
    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.running.abort import AbortSignal
    from dsh_nb.tools.values.execution import ToolExecution

__all__ = [
    "MAX_LINES",
    "MAX_LINE_CHARS",
    "PROGRESS_EVERY_S",
    "ToolContext",
]

_log = logging.getLogger("dsh_nb.tools")

PROGRESS_EVERY_S: Final = 0.1
MAX_LINES: Final = 500
MAX_LINE_CHARS: Final = 2000
_PARTIAL_MAX: Final = 64 * 1024


class _Done:
    """An awaitable that is already done: ``progress`` works awaited or not."""

    __slots__ = ()

    def __await__(self) -> Iterator[None]:
        return iter(())


_DONE: Final = _Done()


class ToolContext:
    """What a running tool may tell and ask, whatever door called it.

    Examples
    --------
    >>> @tool
    ... async def index(folder: str, ctx: ToolContext) -> str:
    ...     files = list_files(folder)
    ...     for i, name in enumerate(files):
    ...         await ctx.progress(i, len(files), name)
    ...     ctx.log(f"indexed {len(files)} files")
    ...     answer = await ctx.ask("Summarise them too?", type=bool)
    ...     if answer.accepted and answer.value:
    ...         return await ctx.sample("Summarise: " + ", ".join(files))
    ...     return "done"
    """

    __slots__ = (
        "_capture",
        "_closed",
        "_dropped",
        "_hearers",
        "_last_sent",
        "_lines",
        "_lock",
        "_loop",
        "_partial",
        "_pending",
        "_thread",
        "execution",
    )

    def __init__(
        self,
        execution: ToolExecution,
        hearers: Sequence[object] = (),
        *,
        capture_output: bool = False,
    ) -> None:
        self.execution = execution
        self._hearers = tuple(hearers)
        self._capture = capture_output
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._lock = threading.Lock()
        self._lines = 0
        self._dropped = 0
        self._partial: dict[str, str] = {}
        self._last_sent = float("-inf")
        self._pending: Progress | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"<ToolContext {self.name!r} {self.call_id!r}>"

    # --- what the call is -------------------------------------------------

    @property
    def call_id(self) -> str:
        return self.execution.call_id

    @property
    def name(self) -> str:
        return self.execution.name

    @property
    def agent(self) -> Agent | None:
        # The values floor types it as a Protocol; every agent is an Agent.
        return cast("Agent | None", self.execution.agent)

    @property
    def signal(self) -> AbortSignal | None:
        """The call's abort signal (a timeout's, once one is installed)."""
        return cast("AbortSignal | None", self.execution.signal)

    # --- progress and log -------------------------------------------------

    def progress(
        self, done: float, total: float | None = None, message: str | None = None
    ) -> _Done:
        """Report how far the call has come; await it or not.

        At most about ten reports a second reach the door: a report inside
        the window is held, and the newest held one goes out when the
        window ends (or the call does), so the last report always arrives.
        A final report (``done >= total``) goes out at once.
        """
        if isinstance(done, bool) or not isinstance(done, (int, float)):
            raise TypeError(f"progress done must be a number, not {done!r}")
        if total is not None and (
            isinstance(total, bool) or not isinstance(total, (int, float))
        ):
            raise TypeError(f"progress total must be a number or None, not {total!r}")
        if message is not None and not isinstance(message, str):
            raise TypeError(f"progress message must be a str or None, not {message!r}")
        report = Progress(float(done), None if total is None else float(total), message)
        now = time.monotonic()
        final = total is not None and done >= total
        with self._lock:
            if self._closed:
                return _DONE
            wait = PROGRESS_EVERY_S - (now - self._last_sent)
            if not final and wait > 0:
                # Held: the newest report goes out when the window ends.
                first = self._pending is None
                self._pending = report
                if first:
                    self._deliver(self._later, wait)
                return _DONE
            held, self._pending = self._pending, None
            self._last_sent = now
        if held is not None and final:
            self._deliver(self._send_progress, held)
        self._deliver(self._send_progress, report)
        return _DONE

    def _later(self, wait: float) -> None:
        self._loop.call_later(wait, self._flush_progress)

    def _flush_progress(self) -> None:
        with self._lock:
            held, self._pending = self._pending, None
            if held is None or self._closed:
                return
            self._last_sent = time.monotonic()
        self._send_progress(held)

    def log(self, message: object, level: str = "info") -> None:
        """Add a line to the call's log (its card, its client, its journal)."""
        name = level_of(level)
        text = message if isinstance(message, str) else str(message)
        for line in text.splitlines() or [""]:
            self._line(LogLine(name, line, "log"))

    # --- ask and sample ---------------------------------------------------

    async def ask(self, message: str, type: Any = str) -> Answer:
        """Ask a person; an :class:`Answer` whose ``value`` is of ``type``.

        ``type`` is ``str``, ``int``, ``float``, ``bool``, a ``Literal`` or
        an ``Enum`` of strings (a choice), or a flat pydantic model (a
        small form; its defaults are offered). Where nobody can be asked
        the answer is ``decline``; an abort of the call makes it
        ``cancel``.
        """
        return await self._ask(str(message), form_of(type))

    async def ask_form(self, message: str, schema: dict[str, Any]) -> Answer:
        """Ask with a flat JSON Schema form as it is; ``value`` is its content.

        For a form someone else wrote (a connected MCP server's elicitation):
        a field the answer leaves out gets the schema's ``default`` (the
        person saw it pre-filled, SEP-1034), then the content is checked
        against ``schema``; one that does not fit is a ``decline``.
        """
        return await self._ask(str(message), schema_form(schema))

    async def _ask(self, message: str, form: Form) -> Answer:
        question = Question(message, form.schema, form.single)
        self._journal("tool/ask", {"message": question.message, "schema": form.schema})
        asker = self._first("ask")
        answer = Answer("decline")
        if asker is not None:
            try:
                got = await self._until_abort(asker.ask(self, question))
            except AbortError:
                got = Answer("cancel")
            except Exception as exc:  # noqa: BLE001 - a failed ask is a decline
                _log.warning("asking for %s failed: %s", self.name, error_message(exc))
                got = Answer("decline")
            if isinstance(got, Answer):
                answer = got
        raw = answer.value if answer.action == "accept" else None
        if answer.action == "accept":
            try:
                answer = Answer("accept", form.read(raw))
                if form.type is None:
                    raw = answer.value  # a schema's form: as sent, defaults in
            except ValueError as exc:
                _log.warning("an answer for %s did not fit: %s", self.name, exc)
                answer, raw = Answer("decline"), None
        else:
            answer = Answer(answer.action)
        data: dict[str, Any] = {"action": answer.action}
        if raw is not None:
            data["content"] = raw
        self._journal("tool/answer", data)
        return answer

    async def sample(
        self, prompt: str, *, system: str | None = None, max_tokens: int | None = None
    ) -> str:
        """Ask the door's model; its text.

        Raises :class:`SamplingUnavailable` where the door has no model
        (an MCP client that declared no sampling, a script) or will not
        ask it (a notebook's approval refused, no model configured), and
        ``AbortError`` when the call's signal aborts meanwhile.
        """
        if not isinstance(prompt, str):
            raise TypeError(f"sample prompt must be a str, not {prompt!r}")
        if system is not None and not isinstance(system, str):
            raise TypeError(f"sample system must be a str or None, not {system!r}")
        if max_tokens is not None and (
            isinstance(max_tokens, bool)
            or not isinstance(max_tokens, int)
            or max_tokens < 1
        ):
            raise ValueError(
                f"sample max_tokens must be a positive int or None, not {max_tokens!r}"
            )
        request = SampleRequest(prompt, system, max_tokens)
        sampler = self._first("sample")
        if sampler is None:
            raise SamplingUnavailable(
                f'tool "{self.name}" asked a model, but this call\'s door has '
                "none to ask (an MCP client must declare sampling; a script "
                "or an evaluation has no model for tools)"
            )
        data: dict[str, Any] = {"prompt": prompt}
        if system is not None:
            data["system"] = system
        if max_tokens is not None:
            data["maxTokens"] = max_tokens
        self._journal("tool/sample", data)
        text = await self._until_abort(sampler.sample(self, request))
        if not isinstance(text, str):
            raise TypeError(f"the model answered {type(text).__name__}, not text")
        self._journal("tool/sampled", {"text": text})
        return text

    async def _until_abort(self, work: Any) -> Any:
        signal = self.signal
        task = asyncio.ensure_future(work)
        if signal is None:
            return await task
        waiter = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if task.cancelled() and signal.aborted:
            raise AbortError(f"the call was aborted: {error_message(signal.reason)}")
        return task.result()

    # --- capture (called by :mod:`capture`) --------------------------------

    def _write(self, source: str, text: str) -> None:
        level = "info" if source == "stdout" else "warning"
        with self._lock:
            buffered = self._partial.get(source, "") + text
            parts = buffered.split("\n")
            rest = parts.pop()
            if len(rest) > _PARTIAL_MAX:
                parts.append(rest)
                rest = ""
            self._partial[source] = rest
        for part in parts:
            self._line(LogLine(level, part.rsplit("\r", 1)[-1], source))

    def _record(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
        level = python_level(record.levelno)
        for line in text.splitlines() or [""]:
            self._line(LogLine(level, line, "logging", record.name))

    def _warning(self, text: str) -> None:
        self._line(LogLine("warning", text, "warning"))

    # --- delivery ----------------------------------------------------------

    def _line(self, line: LogLine) -> None:
        with self._lock:
            if self._closed:
                return
            if self._lines >= MAX_LINES:
                self._dropped += 1
                return
            self._lines += 1
        if len(line.text) > MAX_LINE_CHARS:
            cut = len(line.text) - MAX_LINE_CHARS
            line = LogLine(
                line.level,
                f"{line.text[:MAX_LINE_CHARS]}… ({cut} more characters)",
                line.source,
                line.logger,
            )
        self._deliver(self._send_line, line)

    def _deliver(self, send: Any, value: object) -> None:
        if threading.get_ident() == self._thread:
            send(value)
            return
        try:
            self._loop.call_soon_threadsafe(send, value)
        except RuntimeError:  # the loop closed: nobody hears any more
            pass

    def _send_progress(self, report: Progress) -> None:
        self._journal("tool/progress", report.to_json())
        self._tell("progress", report)

    def _send_line(self, line: LogLine) -> None:
        self._journal("tool/log", line.to_json())
        self._tell("log", line)

    def _tell(self, method: str, value: object) -> None:
        for hearer in self._hearers:
            fn = getattr(hearer, method, None)
            if fn is None:
                continue
            try:
                fn(self, value)
            except Exception as exc:  # noqa: BLE001 - a hearer never breaks a call
                _log.warning("call %s hearer failed: %s", method, error_message(exc))

    def _first(self, method: str) -> Any:
        for hearer in self._hearers:
            if getattr(hearer, method, None) is not None:
                return hearer
        return None

    def _journal(self, type_: str, data: dict[str, Any]) -> None:
        agent = self.execution.agent
        if agent is None:
            return
        data = {"callId": self.call_id, **data}
        try:
            agent.session.append(type_, data)
        except ValueError as exc:  # a value that is not JSON: note, go on
            _log.warning("journal %s skipped: %s", type_, error_message(exc))

    def _close(self) -> None:
        """The call's execute stage ended: flush what is held, then go quiet."""
        with self._lock:
            if not self._partial and self._pending is None and not self._dropped:
                self._closed = True  # most calls: nothing held, nothing to say
                return
            partial = [(s, t) for s, t in self._partial.items() if t]
            self._partial.clear()
        for source, text in partial:
            level = "info" if source == "stdout" else "warning"
            self._line(LogLine(level, text.rsplit("\r", 1)[-1], source))
        with self._lock:
            pending, self._pending = self._pending, None
            dropped, self._dropped = self._dropped, 0
            self._closed = True
        if pending is not None:
            self._deliver(self._send_progress, pending)
        if dropped:
            self._deliver(
                self._send_line, LogLine("info", f"… {dropped} more lines", "dsh")
            )
