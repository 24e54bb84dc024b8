"""A new provider is one module and one row: every door picks it up.

A throwaway provider, ``echo``, is a module written here (its adapter
speaks Chat Completions through the client's ``echo.create``) and one row
added to ``PROVIDER_TABLE`` before anything reads the table. Then
``Chat``, ``run_eval`` (its practice model, a recording and its replay),
``python -m dsh_nb eval``, ``DshChat.provider``, ``%tools --echo`` and the
loopback ``ReplayServer`` must all know it. One subprocess, since several doors read the table once,
when imported.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from processes import run_python

ADAPTER = '''
from types import SimpleNamespace

from dsh_nb.models.openai_api import OpenAIAdapter


class EchoAdapter(OpenAIAdapter):
    """Chat Completions, asked through the client's ``echo.create``."""

    async def complete(self, **options):
        client = self.client
        create = SimpleNamespace(create=client.echo.create)
        self.client = SimpleNamespace(chat=SimpleNamespace(completions=create))
        try:
            return await super().complete(**options)
        finally:
            self.client = client
'''

SCRIPT = """
import asyncio, json, sys
from dsh_nb.models.providers import PROVIDER_TABLE, Provider

PROVIDER_TABLE["echo"] = Provider(
    name="echo",
    sdk="openai",
    client="AsyncOpenAI",
    adapter="echo_adapter:EchoAdapter",
    request=("echo", "create"),
    response="openai.types.chat:ChatCompletion",
    route="/echo",
    label="Echo",
)

from dsh_nb.evals import Case, PracticeModel, call, run_eval
from dsh_nb.evals.cli import _parser
from dsh_nb.models import Chat
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import Turn
from dsh_nb.notebook.magics.chat import DshChat
from dsh_nb.notebook.magics.tools import ToolsMagics
from dsh_nb.tools import ToolRegistry, tool


@tool
def add(a: int, b: int) -> int:
    '''Add two numbers.'''
    return a + b


registry = ToolRegistry()
registry.register(add)
seen = []


def model(request):
    seen.append((request.provider, [m["role"] for m in request.messages]))
    if request.messages[-1]["role"] == "tool":
        return "5"
    return [("add", {"a": 2, "b": 3})]


cases = [Case("What is 2 + 3?", expect=call("add", a=2, b=3), id="sum")]
path = sys.argv[1]
out = {}
report = asyncio.run(run_eval(
    cases, model=PracticeModel(model), provider="echo", registry=registry,
    record=path, progress=False,
))
out["live"] = report.summary()["passed"].successes
replayed = asyncio.run(run_eval(
    cases, model="practice", provider="echo", registry=registry,
    replay=path, progress=False,
))
out["replayed"] = replayed.summary()["passed"].successes
out["seen"] = seen
chat = Chat("m", provider="echo", base_url="http://127.0.0.1:9/v1", api_key="k")
out["chat"] = type(chat._get_adapter()).__name__
out["cli"] = _parser().parse_args(["c:d", "--provider", "echo"]).provider
config = DshChat()
config.provider = "echo"
out["key"] = config.key_variable()
parser = ToolsMagics.tools.parser
flags = parser.parse_args(["--echo"])
out["flag"] = flags.echo
out["help"] = parser.format_help().count("Echo tools")
import urllib.request
with ReplayServer([Turn(text="over HTTP")]) as server:
    request = urllib.request.Request(
        server.openai_url + "/echo",
        data=json.dumps({"model": "m", "messages": []}).encode(),
        headers={"authorization": "Bearer " + server.token},
    )
    with urllib.request.urlopen(request) as response:
        body = json.load(response)
    out["http"] = body["choices"][0]["message"]["content"]
    out["routed"] = server.requests[0].api
print(json.dumps(out))
"""


def test_a_new_row_is_picked_up_by_every_door(tmp_path: Path) -> None:
    (tmp_path / "echo_adapter.py").write_text(textwrap.dedent(ADAPTER))
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    done = run_python(str(script), str(tmp_path / "run.jsonl"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["live"] == 1 and out["replayed"] == 1
    # The practice model read each request through the row's adapter: the
    # call, then its result, in the neutral form.
    assert out["seen"] == [
        ["echo", ["user"]],
        ["echo", ["user", "assistant", "tool"]],
    ]
    assert out["chat"] == "EchoAdapter"
    assert out["cli"] == "echo"
    assert out["key"] == "ECHO_API_KEY"
    assert out["flag"] is True and out["help"] == 1
    assert out["http"] == "over HTTP" and out["routed"] == "echo"
