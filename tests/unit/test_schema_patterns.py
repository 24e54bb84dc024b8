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


def _string(pattern: str) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": pattern}},
    }


# Every hostile check, by name: (schema, arguments).
CASES: dict[str, tuple[object, object]] = {
    **{
        pattern: (_string(pattern), {"s": ("x" if "x" in pattern else "a") * 40 + "!"})
        for pattern in HOSTILE
    },
    "property names": (
        {
            "type": "object",
            "patternProperties": {"^(a|aa)+$": {"type": "integer"}},
            "additionalProperties": False,
            "propertyNames": {"pattern": "^(a|a)*$"},
        },
        {"a" * 40 + "!": 1},
    ),
    "many": (
        {
            "type": "object",
            "properties": {
                "xs": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^(a|aa)+$"},
                }
            },
        },
        {"xs": ["a" * 40 + "!"] * 100},
    ),
}
# One child for every case (each timed alone): starting one per case was
# most of this file's time, and a case that blocks still fails them all.
CHILD = """
import json, sys, time
from dsh_nb.tools.schema import compile_json_schema_validator
out = {}
for name, (schema, args) in json.loads(sys.argv[1]).items():
    validate = compile_json_schema_validator(schema)
    started = time.monotonic()
    violations = validate(args)
    out[name] = [time.monotonic() - started, violations]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def checked() -> dict[str, tuple[float, list[str]]]:
    """Each case's (seconds its validation took, violations)."""
    try:
        done = run_python("-c", CHILD, json.dumps(CASES), timeout=60, check=True)
    except subprocess.TimeoutExpired:
        pytest.fail("validating 40 characters took over 60 s")
    return {
        name: (took, found) for name, (took, found) in json.loads(done.stdout).items()
    }


@pytest.mark.parametrize("pattern", HOSTILE)
def test_a_hostile_pattern_returns_promptly(
    checked: dict[str, tuple[float, list[str]]], pattern: str
) -> None:
    took, violations = checked[pattern]
    assert took < 2.0  # 0.2 s of budget, on a loaded machine
    assert len(violations) == 1 and violations[0].startswith('"s" ')
    assert repr(pattern) in violations[0]  # the model learns which pattern


def test_hostile_patterns_on_property_names_return_promptly(
    checked: dict[str, tuple[float, list[str]]],
) -> None:
    took, violations = checked["property names"]
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


def test_many_hostile_checks_share_one_budget(
    checked: dict[str, tuple[float, list[str]]],
) -> None:
    took, violations = checked["many"]
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
