"""A tool built from a schema its maker wrote: no meta-schema check, lazy.

``define_tool`` checks every raw JSON Schema against its meta-schema (about
5 ms) and compiles its validator at once: right for a schema a person
pasted. The BFCL loader builds thousands of tools from schemas it wrote
itself (:func:`dsh_nb.evals.bfcl.tool_schema`), most never called in a run;
it trusts them (a test checks every one) and compiles each check when first
used. The check is the same ``compile_json_schema_validator`` text, so a
dry run's ``INVALID_ARGS`` reads as it would from ``define_tool``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.errors import ToolArgsError
from dsh_nb.tools.schema.argcheck import mark_check

__all__ = ["LazyCheck", "trusted_tool"]


class LazyCheck:
    """A tool's argument check, compiled when first used, from a trusted schema.

    The schema is :func:`dsh_nb.evals.bfcl.tool_schema`'s output, a form this module
    writes, so jsonschema's meta-schema check (5 ms a tool, most of a
    load's time) is skipped; and a tool no model called costs nothing.
    """

    __slots__ = ("_check", "name", "schema")

    def __init__(self, name: str, schema: Mapping[str, Any]) -> None:
        self.name = name
        self.schema = schema
        self._check: Any = None

    def __call__(self, args: object) -> list[str]:
        check = self._check
        if check is None:
            from dsh_nb.tools.schema.spec import compile_json_schema_validator

            check = compile_json_schema_validator(
                self.schema, tool_name=self.name, trusted=True
            )
            self._check = check
        violations: list[str] = check(args)
        return violations


def trusted_tool(
    name: str,
    description: str,
    schema: dict[str, Any],
    body: Callable[[Any], Any],
) -> ToolDefinition:
    """A tool whose arguments go through the lazy check, then ``body(args)``."""
    check = LazyCheck(name, schema)

    def run(args: Any, execution: Any) -> Any:
        violations = check(args)
        if violations:
            raise ToolArgsError(violations)
        return body(args)

    mark_check(run, check)  # what the dry run checks arguments with
    return ToolDefinition(
        name=name, description=description, parameters=schema, execute=run
    )
