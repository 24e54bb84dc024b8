"""Time argument validators on the tool-call hot path.

Prints the median nanoseconds per call of the check ``define_tool`` builds
for a DSL spec (``validate_args`` over the spec ``check_spec`` copied),
``validate_args`` on the author's spec, our raw-JSON-Schema wrapper, a
prebuilt jsonschema validator and fastjsonschema (when importable), for the
``add`` spec and a 10-field nested spec, with valid and invalid arguments.

Run: ``python benchmarks/validators.py [--repeat N]``
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from collections.abc import Callable
from typing import Any

import jsonschema

from dsh_nb.tools import define_tool
from dsh_nb.tools.jsonvalue import snapshot_json
from dsh_nb.tools.schema import (
    SchemaProp,
    compile_json_schema_validator,
    schema_spec_to_json_schema,
    validate_args,
)
from dsh_nb.tools.schema.argcheck import own_check

__all__ = ["main"]

ADD = {
    "a": SchemaProp(type="number", required=True),
    "b": SchemaProp(type="number", required=True),
}
NESTED: dict[str, Any] = {
    "name": {"type": "string", "required": True},
    "age": {"type": "number"},
    "active": {"type": "boolean"},
    "role": {"type": "string", "enum": ["admin", "user", "guest"]},
    "tags": {"type": "array", "items": {"type": "string"}},
    "scores": {"type": "array", "items": {"type": "number"}},
    "address": {
        "type": "object",
        "required": True,
        "properties": {
            "street": {"type": "string"},
            "city": {"type": "string", "required": True},
            "zip": {"type": "string"},
        },
    },
    "servers": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "host": {"type": "string", "required": True},
                "port": {"type": "number"},
            },
        },
    },
    "meta": {"type": "object"},
    "notes": {"type": "string"},
}
CASES: dict[str, tuple[Any, Any]] = {
    "add / valid": (ADD, {"a": 1, "b": 2.5}),
    "add / invalid": (ADD, {"a": "1"}),
    "nested / valid": (
        NESTED,
        {
            "name": "ada",
            "age": 36,
            "active": True,
            "role": "admin",
            "tags": ["x", "y", "z"],
            "scores": [1, 2.5, 3],
            "address": {"street": "1 Main", "city": "London", "zip": "N1"},
            "servers": [{"host": "a", "port": 80}, {"host": "b"}],
            "meta": {"k": [1, 2]},
            "notes": "hello",
        },
    ),
    "nested / invalid": (
        NESTED,
        {
            "age": "36",
            "active": 1,
            "role": "root",
            "tags": ["x", 2],
            "address": {"street": "1 Main"},
            "servers": [{"port": 80}, "b"],
            "meta": [],
        },
    ),
}


def _fastjsonschema(schema: dict[str, Any]) -> Callable[[Any], Any] | None:
    try:
        import fastjsonschema
    except ImportError:
        return None
    compiled = fastjsonschema.compile(schema)

    def validate(args: Any) -> Any:
        try:
            return compiled(args)
        except fastjsonschema.JsonSchemaValueException as exc:
            return exc

    return validate


def _contenders(spec: Any) -> dict[str, Callable[[Any], Any] | None]:
    schema = schema_spec_to_json_schema(spec)
    prebuilt = jsonschema.Draft202012Validator(schema)
    tool = define_tool(name="t", description="", parameters=spec, execute=str)
    return {
        "dsh define_tool's check": own_check(tool),
        "dsh validate_args": lambda args: validate_args(spec, args),
        "dsh compile_json_schema_validator": compile_json_schema_validator(schema),
        "jsonschema iter_errors (prebuilt)": lambda args: list(
            prebuilt.iter_errors(args)
        ),
        "jsonschema is_valid (prebuilt)": prebuilt.is_valid,
        "fastjsonschema (compiled)": _fastjsonschema(schema),
    }


def _median_ns(fn: Callable[[Any], Any], args: Any, repeat: int) -> float:
    timer = timeit.Timer(lambda: fn(args))
    number, elapsed = timer.autorange()
    number = max(1, int(number * 0.2 / max(elapsed, 1e-9)))
    runs = timer.repeat(repeat=repeat, number=number)
    return statistics.median(runs) / number * 1e9


def main() -> None:
    """Print one row per validator, one column per case."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timing runs per cell")
    repeat = parser.parse_args().repeat
    rows: dict[str, dict[str, str]] = {}
    for case, (spec, raw_args) in CASES.items():
        args = snapshot_json(raw_args)  # what the pipeline hands a validator
        for name, fn in _contenders(spec).items():
            cell = "n/a" if fn is None else f"{_median_ns(fn, args, repeat):,.0f}"
            rows.setdefault(name, {})[case] = cell
    width = max(len(name) for name in rows)
    header = f"{'median ns per call':<{width}}" + "".join(f"{c:>18}" for c in CASES)
    print(header)
    print("-" * len(header))
    for name, cells in rows.items():
        print(f"{name:<{width}}" + "".join(f"{cells[c]:>18}" for c in CASES))


if __name__ == "__main__":
    main()
