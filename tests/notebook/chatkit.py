"""What the in-process ``%%chat`` tests share: a tool cell and the config."""

from __future__ import annotations

from ipshell import run
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.models.replay_server import ReplayServer

__all__ = ["KEY_ENV", "TOOLS", "configure"]

#: The environment variable the ``server`` fixture puts the replay key in.
KEY_ENV = "REPLAY_KEY"

TOOLS = '''%%tool
def add(a: int, b: int = 0) -> str:
    """Add two integers."""
    return str(a + b)
'''


def configure(ip: InteractiveShell, server: ReplayServer) -> None:
    """Point the kernel's chat at ``server``, reading its key from the env."""
    run(ip, f'%config DshChat.base_url = "{server.openai_url}"')
    run(ip, f'%config DshChat.api_key_env = "{KEY_ENV}"')
    run(ip, '%config DshChat.model = "replay-model"')
