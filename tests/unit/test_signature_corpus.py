"""A corpus of realistic data-science tools through ``@tool`` and the pipeline.

For every tool in ``signature_corpus``: the schema is valid JSON Schema;
each good call runs and the body sees the annotated types; each bad call is
an ``INVALID_ARGS`` result whose text lists exactly the expected clauses;
and the exported schema agrees with the runtime on every sample, with
``format`` asserted by jsonschema's own format checker (``format_only``
marks a bad call that only the format assertion refuses).
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from signature_corpus import CORPUS, Sample

from dsh_nb.tools import ToolExecutionInput, ToolRegistry
from dsh_nb.tools.definition import tool

IDS = [sample.func.__name__ for sample in CORPUS]


def _with_formats(schema: Any) -> jsonschema.Draft202012Validator:
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    return jsonschema.Draft202012Validator(schema, format_checker=checker)


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 40
    assert len(set(IDS)) == len(IDS)


async def _call(sample: Sample, args: Any) -> Any:
    registry = ToolRegistry()
    definition = tool(sample.func)
    registry.register(definition)
    call = ToolExecutionInput(call_id="c1", name=definition.name, arguments=args)
    return definition, await registry.execute(call)


@pytest.mark.parametrize("sample", CORPUS, ids=IDS)
async def test_good_calls_run_with_converted_arguments(sample: Sample) -> None:
    for args, expected in sample.good:
        definition, result = await _call(sample, args)
        assert not result.is_error, (args, result.content)
        assert result.content == [{"type": "text", "text": expected}]
        jsonschema.Draft202012Validator.check_schema(definition.parameters)
        assert _with_formats(definition.parameters).is_valid(args), args


@pytest.mark.parametrize("sample", CORPUS, ids=IDS)
async def test_bad_calls_list_every_violation_in_declared_order(
    sample: Sample,
) -> None:
    for args, clauses in sample.bad:
        definition, result = await _call(sample, args)
        assert result.is_error
        assert result.to_json()["error"] == {
            "name": "ToolArgsError",
            "code": "INVALID_ARGS",
        }
        assert result.content == [
            {"type": "text", "text": "Error: invalid arguments: " + "; ".join(clauses)}
        ]
        valid = jsonschema.Draft202012Validator(definition.parameters).is_valid(args)
        assert valid is sample.format_only, args
        assert not _with_formats(definition.parameters).is_valid(args), args
