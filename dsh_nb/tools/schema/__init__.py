"""Schemas: the SchemaSpec DSL, raw JSON Schema, the structured-output subset.

What a tool's parameters are, written once and read three ways: the JSON
Schema a model is shown, the argument check a call goes through, and the
definition-time check that speaks to the tool's author.
"""

from __future__ import annotations

from dsh_nb.tools.schema.spec import (
    SCHEMA_TYPES,
    SchemaProp,
    SchemaSpec,
    Validator,
    check_spec,
    compile_json_schema_validator,
    compile_validator,
    schema_spec_to_json_schema,
    validate_args,
)

__all__ = [
    "SCHEMA_TYPES",
    "SchemaProp",
    "SchemaSpec",
    "Validator",
    "check_spec",
    "compile_json_schema_validator",
    "compile_validator",
    "schema_spec_to_json_schema",
    "validate_args",
]
