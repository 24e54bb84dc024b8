"""The official SDK clients the evals tests talk to the responder with."""

from __future__ import annotations

from typing import Any

from dsh_nb.models.replay_server import ReplayServer


def sdk_client(provider: str, server: ReplayServer) -> Any:
    if provider == "anthropic":
        import anthropic

        return anthropic.AsyncAnthropic(
            base_url=server.url, api_key=server.token, max_retries=0
        )
    import openai

    return openai.AsyncOpenAI(
        base_url=server.openai_url, api_key=server.token, max_retries=0
    )
