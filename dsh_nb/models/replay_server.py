"""A loopback HTTP server that answers like a model API, from a script.

Tests, the teaching notebook and ``python -m dsh_nb demo`` need a model
that answers the same way every time, offline and without keys, through the
official SDK clients. :class:`ReplayServer` speaks the route of each
provider of :data:`~dsh_nb.models.providers.PROVIDER_TABLE` (OpenAI Chat
Completions, ``POST /v1/chat/completions``; Anthropic Messages,
``POST /v1/messages``) on ``127.0.0.1`` and a free port, as JSON or as SSE
(per the request's ``stream``, in the words of the provider's adapter), and
answers each request with the
next :data:`~dsh_nb.models.scripted.Reply` of its script. It runs in its own
thread, so a kernel's event loop stays free, and it requires the token as
``Authorization: Bearer`` or ``x-api-key`` like the real services.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from dsh_nb.models import scripted
from dsh_nb.models.providers import provider_row, routed
from dsh_nb.models.scripted import ApiError, Raw, Reply, Turn

__all__ = ["RecordedRequest", "ReplayServer"]

Responder = Callable[["RecordedRequest"], Reply]
Step = Reply | Responder


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRequest:
    """One request the server got: route, JSON body, headers (no secrets)."""

    api: str
    path: str
    body: Any
    headers: Mapping[str, str]


class ReplayServer:
    """Serve a script of replies to model API requests on loopback.

    Parameters
    ----------
    replies
        Replies answered in order, one a request; an item may be a callable
        ``(RecordedRequest) -> Reply`` that reads the request first (as a
        model reads the conversation). A callable in place of the list
        answers every request.
    token
        The key clients must send; a fresh random one if None.

    Examples
    --------
    >>> server = ReplayServer([Turn(text="hi")]).start()  # doctest: +SKIP
    >>> AsyncOpenAI(base_url=server.openai_url, api_key=server.token)  # doctest: +SKIP
    """

    def __init__(
        self, replies: Iterable[Step] | Responder = (), *, token: str | None = None
    ) -> None:
        self.token = token if token is not None else secrets.token_urlsafe(16)
        self._responder = replies if callable(replies) else None
        self._queue: deque[Step] = deque(() if callable(replies) else replies)
        self.requests: list[RecordedRequest] = []
        #: Streams whose client went away before the last event was sent.
        self.disconnects = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- life -------------------------------------------------------------

    def start(self) -> ReplayServer:
        """Bind ``127.0.0.1`` on a free port and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        handler = type("Handler", (_Handler,), {"replay": self})
        httpd = _Server(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="dsh-replay-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port (idempotent)."""
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (start first)."""
        if self._httpd is None:
            raise RuntimeError("the replay server is not running; call start()")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: Anthropic's ``base_url``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: an OpenAI-compatible ``base_url``."""
        return f"{self.url}/v1"

    # --- the script -------------------------------------------------------

    def add(self, *replies: Step) -> None:
        """Queue more replies."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Replies not answered yet."""
        return len(self._queue)

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._responder is not None:
                return self._responder(request)
            step = self._queue.popleft() if self._queue else None
        if callable(step):
            return step(request)
        if step is not None:
            return step
        return ApiError(status=500, message="the replay script has no more replies")

    def __repr__(self) -> str:
        where = self.url if self._httpd is not None else "stopped"
        return f"<ReplayServer {where} {len(self._queue)} replies left>"


class _Server(ThreadingHTTPServer):
    """Quiet about clients that hang up (an interrupted run, a test's end)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away is no error of ours; others are printed."""
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # BrokenPipeError, ConnectionResetError, ...
        super().handle_error(request, client_address)


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class _Handler(BaseHTTPRequestHandler):
    replay: ReplayServer
    protocol_version = "HTTP/1.1"
    # Headers and body are separate writes: without this, Nagle plus the
    # client's delayed ACK hold every response for ~40 ms.
    disable_nagle_algorithm = True
    server_version = "dsh-replay/1"

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: a kernel's stderr is the user's output."""

    def do_GET(self) -> None:
        self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        row = routed(path)
        if row is None:
            self._json(404, {"error": {"message": f"no route {path}"}})
            return
        api = row.name
        if not self._authorized():
            self._error(api, ApiError(status=401, message="invalid api key"))
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._error(api, ApiError(status=400, message=f"body is not JSON: {exc}"))
            return
        headers = {
            k.lower(): v
            for k, v in self.headers.items()
            if k.lower() not in ("authorization", "x-api-key")
        }
        request = RecordedRequest(api=api, path=path, body=body, headers=headers)
        reply = self.replay._next(request)
        if isinstance(reply, ApiError):
            self._error(api, reply)
        elif isinstance(reply, Raw):
            self._raw(reply)
        else:
            self._turn(api, reply, body, len(self.replay.requests))

    def _authorized(self) -> bool:
        token = self.replay.token
        sent = self.headers.get("x-api-key")
        auth = self.headers.get("authorization") or ""
        if auth.lower().startswith("bearer "):
            sent = auth[7:]
        return sent is not None and hmac.compare_digest(sent.encode(), token.encode())

    # --- writing ----------------------------------------------------------

    def _json(self, status: int, body: object, extra: Mapping[str, str] = {}) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in extra.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, api: str, error: ApiError) -> None:
        if error.type == "api_error" and error.status in _ERROR_TYPES:
            error = ApiError(
                status=error.status,
                message=error.message,
                type=_ERROR_TYPES[error.status],
                code=error.code,
            )
        body = provider_row(api).adapter_class().error_body(error)
        extra = {"retry-after": "0"} if error.status == 429 else {}
        self._json(error.status, body, extra)

    def _raw(self, reply: Raw) -> None:
        if reply.content_type.startswith("text/event-stream"):
            events = scripted.split_events(reply.body)
            self._stream(reply.status, events, reply.chunk_delay, reply.cut_after)
            return
        data = reply.body.encode()
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        self.send_header("content-length", str(len(data)))
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _turn(self, api: str, turn: Turn, body: Any, seq: int) -> None:
        if turn.delay:
            time.sleep(turn.delay)
        model = str(body.get("model", "replay")) if isinstance(body, dict) else ""
        stream = isinstance(body, dict) and body.get("stream") is True
        adapter = provider_row(api).adapter_class()
        if not stream:
            self._json(200, adapter.reply_body(turn, model, seq))
            return
        events = adapter.reply_events(turn, model, seq, body)
        self._stream(200, events, turn.chunk_delay, turn.cut_after)

    def _stream(
        self, status: int, events: list[str] | Any, delay: float, cut: int | None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for number, event in enumerate(events):
                if cut is not None and number >= cut:
                    # Close mid-body: no terminating chunk, as a dropped
                    # connection looks to the client.
                    self.close_connection = True
                    self.wfile.flush()
                    return
                if delay and number:
                    time.sleep(delay)
                data = event.encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            with self.replay._lock:
                self.replay.disconnects += 1
            self.close_connection = True
