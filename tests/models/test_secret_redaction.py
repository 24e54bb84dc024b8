"""A model API key never reaches a reply, an error or a log, for both SDKs.

The official openai and anthropic clients talk to the loopback replay
server. A key read from a file keeps its newline (an HTTP client refuses
it in a header, quoting the key); a server may quote the key in its 401
body; an exception may carry it into a log. Each text a person sees or a
file keeps has the key replaced by ``[secret]``.
"""

from __future__ import annotations

import logging

import pytest

from dsh_nb.models.chat import Chat
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ApiError, Turn

REDACTED = "[secret]"  # what dsh_nb.tools.audit.secrets.REDACTED says

PROVIDERS = ("openai", "anthropic")


def _base_url(server: ReplayServer, provider: str) -> str:
    return server.openai_url if provider == "openai" else server.url


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_key_read_from_a_file_works_despite_its_newline(
    provider: str, server: ReplayServer, tmp_path
) -> None:
    key_file = tmp_path / "key.txt"
    key_file.write_text(server.token + "\n", encoding="utf-8")
    server.add(Turn(text="hello"))
    chat = Chat(
        "m",
        provider=provider,
        base_url=_base_url(server, provider),
        api_key=key_file.read_text(encoding="utf-8"),
    )
    reply = await chat.send("hi")
    assert reply.error is None, reply.error
    assert reply.text == "hello"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_401_body_quoting_the_key_is_redacted(
    provider: str, server: ReplayServer, caplog: pytest.LogCaptureFixture
) -> None:
    key = server.token
    server.add(ApiError(status=401, message=f"Incorrect API key provided: {key}."))
    chat = Chat(
        "m", provider=provider, base_url=_base_url(server, provider), api_key=key
    )
    reply = await chat.send("hi")
    assert reply.stop == "error" and reply.error is not None
    assert key not in reply.error
    assert f"Incorrect API key provided: {REDACTED}." in reply.error
    assert "(check the API key)" in reply.error
    # The same text logged, with the exception, is redacted too.
    with caplog.at_level(logging.WARNING):
        try:
            raise RuntimeError(f"request failed for {key}")
        except RuntimeError:
            logging.getLogger("dsh_nb.test").exception("sent %s", key)
    logged = caplog.text
    assert key not in logged and logged.count(REDACTED) >= 2


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_callers_own_client_key_is_redacted(
    provider: str, request: pytest.FixtureRequest, server: ReplayServer
) -> None:
    client = request.getfixturevalue(f"{provider}_client")
    server.add(ApiError(status=401, message=f"bad key {server.token}"))
    reply = await Chat("m", provider=provider, client=client).send("hi")
    assert reply.error is not None and server.token not in reply.error
