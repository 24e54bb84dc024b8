"""A raw schema's patterns are matched under a time limit.

A hostile ``pattern`` (what a connected MCP server may declare) makes
Python's ``re`` backtrack for hours on 40 characters. Each check runs in
a child process with a deadline, so a pattern that blocks fails the test
instead of hanging it.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from processes import run_python

from dsh_nb.tools import ToolDefinitionError, define_tool
from dsh_nb.tools.schema import compile_json_schema_validator

# Seconds: the budget is 0.2 s per validation; an unbounded search takes hours.
HOSTILE = ("^(a+)+$", "^(a|aa)+$", "^(a|a)*$", "(x+x+)+y$")
CHILD = """
import json, sys, time
from dsh_nb.tools.schema import compile_json_schema_validator
schema, args = json.loads(sys.argv[1]), json.loads(sys.argv[2])
validate = compile_json_schema_validator(schema)
started = time.monotonic()
violations = validate(args)
print(json.dumps([time.monotonic() - started, violations]))
"""


def _validate_in_child(schema: object, args: object) -> tuple[float, list[str]]:
    try:
        done = run_python(
            "-c", CHILD, json.dumps(schema), json.dumps(args), timeout=30, check=True
        )
    except subprocess.TimeoutExpired:
        pytest.fail("validating 40 characters took over 30 s")
    took, violations = json.loads(done.stdout)
    return took, violations


def _string(pattern: str) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": pattern}},
    }


@pytest.mark.parametrize("pattern", HOSTILE)
def test_a_hostile_pattern_returns_promptly(pattern: str) -> None:
    subject = ("x" if "x" in pattern else "a") * 40 + "!"
    took, violations = _validate_in_child(_string(pattern), {"s": subject})
    assert took < 2.0  # 0.2 s of budget, on a loaded machine
    assert len(violations) == 1 and violations[0].startswith('"s" ')
    assert repr(pattern) in violations[0]  # the model learns which pattern


def test_hostile_patterns_on_property_names_return_promptly() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^(a|aa)+$": {"type": "integer"}},
        "additionalProperties": False,
        "propertyNames": {"pattern": "^(a|a)*$"},
    }
    took, violations = _validate_in_child(schema, {"a" * 40 + "!": 1})
    assert took < 2.0  # 0.2 s of budget, on a loaded machine
    assert violations and all("in time" in v for v in violations)


def test_ordinary_patterns_still_check() -> None:
    validate = compile_json_schema_validator(_string("^[a-z]+-[0-9]{2}$"))
    assert validate({"s": "abc-12"}) == []
    assert validate({"s": "abc-1"}) == [
        "\"s\" 'abc-1' does not match '^[a-z]+-[0-9]{2}$'"
    ]
    keyed = compile_json_schema_validator(
        {
            "type": "object",
            "patternProperties": {"^x_": {"type": "integer"}},
            "additionalProperties": False,
        }
    )
    assert keyed({"x_a": 1}) == []
    assert keyed({"x_a": "no"}) == ['"x_a" must be an integer']
    assert keyed({"y": 1}) == ["\"arguments\" 'y' do not match any of the patterns"]


def test_many_hostile_checks_share_one_budget() -> None:
    schema = {
        "type": "object",
        "properties": {
            "xs": {"type": "array", "items": {"type": "string", "pattern": "^(a|aa)+$"}}
        },
    }
    took, violations = _validate_in_child(schema, {"xs": ["a" * 40 + "!"] * 100})
    assert took < 2.0  # 0.2 s of budget, on a loaded machine
    assert len(violations) == 100


def test_unmatchable_schemas_are_refused_at_definition() -> None:
    with pytest.raises(ToolDefinitionError, match="unevaluatedProperties"):
        define_tool(
            name="t",
            description="d",
            parameters={
                "type": "object",
                "patternProperties": {"^a": {}},
                "unevaluatedProperties": False,
            },
            execute=lambda args: "x",
        )
    with pytest.raises(ToolDefinitionError, match="is not a 'regex'"):
        compile_json_schema_validator(_string("(a"))
