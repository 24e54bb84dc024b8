"""A failed run says so: request errors are their own state, in red, once."""

from __future__ import annotations

import io
import socket
import struct
import time
from typing import Any

import openai
import pytest
import responder as rsp
from evalkit import sdk_client

from dsh_nb.evals import TextProgress, run_eval
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ApiError, Turn


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_wrong_base_url_stops_early_and_says_so_once() -> None:
    client = openai.AsyncOpenAI(
        base_url=f"http://127.0.0.1:{_closed_port()}/v1",
        api_key="sk-not-used-here",
        max_retries=0,
    )
    stream = io.StringIO()
    report = await run_eval(
        rsp.cases(),
        model="m",
        client=client,
        registry=rsp.registry(),
        trials=10,
        concurrency=1,
        progress=TextProgress(stream),
    )
    # Five in a row, then no more trials are taken: what ran is kept.
    assert len(report.trials) == 5
    assert report.errors == 5
    assert {t.state for t in report.trials} == {"error"}
    assert "5 request errors in a row" in report.meta["stopped"]
    summary = report.summary()
    assert summary["passed"].n == 0  # no answer measures nothing
    text = str(report)
    assert "request errors: 5 of 5 trials" in text
    assert "stopped after 5 request errors in a row" in text
    html = report._repr_html_()
    assert "dsh-EvalErrors" in html and "--jp-error-color1" in html
    # The message is said once per place, never "failed: Error: ... failed".
    for place in (html, report.meta["stopped"], stream.getvalue()):
        assert "Error: the model request failed" not in place
    reason = html.split("dsh-EvalFailure")[1]
    assert reason.count("the model request failed") == 1
    last = stream.getvalue().strip().splitlines()[-1]
    assert "5/80 trials · 5 request errors · stopped after 5" in last


async def test_errors_in_a_row_only(server: ReplayServer) -> None:
    """An error between answers does not stop the run; the count does."""
    answers: list[Any] = []
    for n in range(12):
        answers.append(
            ApiError(status=500, message="busy") if n % 2 else Turn(text="hi")
        )
    with ReplayServer(answers) as srv:
        report = await run_eval(
            rsp.cases()[6:7],
            model="m",
            client=sdk_client("openai", srv),
            registry=rsp.registry(),
            trials=12,
            concurrency=1,
            max_request_errors=2,
            progress=False,
        )
    assert len(report.trials) == 12 and "stopped" not in report.meta
    assert report.errors == 6
    assert [t.state for t in report.trials[:2]] == ["passed", "error"]
    assert "the model API answered 500" in str(report.failures()[0].error)
    with pytest.raises(ValueError, match="max_request_errors"):
        await run_eval(rsp.cases(), model="m", client=object(), max_request_errors=0)


def test_a_client_hanging_up_prints_no_traceback(capfd: Any) -> None:
    """Interrupting a run closes its connections: the server stays quiet."""
    with ReplayServer([Turn(text="x" * 200_000, delay=0.3)] * 3) as server:
        for _ in range(3):
            sock = socket.create_connection(("127.0.0.1", server.port))
            body = b'{"model": "m", "messages": []}'
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                + f"Authorization: Bearer {server.token}\r\n".encode()
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            # Reset, not a polite close: the server's writes then fail.
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
            sock.close()
        time.sleep(0.8)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipe" not in err
