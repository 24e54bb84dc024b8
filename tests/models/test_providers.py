"""The provider table: each row builds its SDK's client and its adapter."""

from __future__ import annotations

import inspect

import pytest

from dsh_nb.models.chat import PROVIDERS, Chat
from dsh_nb.models.providers import PROVIDER_TABLE, Provider, ProviderAdapter

SEAM = [
    name
    for name, _ in inspect.getmembers(ProviderAdapter, inspect.isfunction)
    if not name.startswith("_")
]


def test_the_names_come_from_the_table() -> None:
    assert PROVIDERS == tuple(PROVIDER_TABLE) == ("openai", "anthropic")
    assert {"tools", "user_message", "results", "complete"} <= set(SEAM)


@pytest.mark.parametrize("name", list(PROVIDER_TABLE))
def test_each_row_makes_its_sdk_client_and_an_adapter_of_the_seam(name: str) -> None:
    row = PROVIDER_TABLE[name]
    client = row.make_client("http://127.0.0.1:9/v1", "sk-test-not-a-key")
    assert type(client).__name__ == row.client
    assert type(client).__module__.split(".")[0] == row.sdk
    adapter = row.make_adapter(client, request_options={})
    assert adapter.client is client
    for method in SEAM:
        assert callable(getattr(adapter, method)), (name, method)
    assert inspect.iscoroutinefunction(adapter.complete)


def test_a_chat_uses_its_providers_row() -> None:
    for name, row in PROVIDER_TABLE.items():
        chat = Chat("m", provider=name, base_url="http://127.0.0.1:9/v1", api_key="k")
        assert type(chat.client).__name__ == row.client
        assert type(chat._get_adapter()).__name__ == row.adapter.split(":")[1]


def test_a_missing_sdk_says_how_to_install_it() -> None:
    row = Provider(
        name="nowhere",
        sdk="dsh_nb_no_such_sdk",
        client="Client",
        adapter="x:Y",
        request=("create",),
        response="x:Response",
        route="/x",
    )
    with pytest.raises(
        ImportError,
        match=r"provider 'nowhere' needs the dsh_nb_no_such_sdk SDK: pip install 'dsh_nb\[models\]'",
    ):
        row.make_client(None, None)
