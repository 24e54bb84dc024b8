"""A tool's own argument check, apart from its body.

An evaluation's dry run (:mod:`dsh_nb.evals`) must refuse exactly the
arguments the tool would refuse, so the model gets the same
``INVALID_ARGS`` text it would get in production, and then answer a stub
instead of running the body. ``define_tool`` and ``@tool`` already build
that check once per tool (their presenters use it too); :func:`mark_check`
notes it on the definition's ``execute``, and :func:`argument_check` reads
it back. A definition built any other way (an MCP tool, a hand-made
``ToolDefinition``) is checked against its ``parameters`` as JSON Schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol

__all__ = ["ArgumentCheck", "Checked", "argument_check", "mark_check", "own_check"]

ArgumentCheck = Callable[[object], list[str]]
_MARK: Final = "__dsh_argument_check__"


class Checked(Protocol):
    """What the check reads of a tool: its body and its parameters schema.

    A :class:`~dsh_nb.tools.definition.ToolDefinition` is one; naming only
    these two keeps the check below the definitions it checks.
    """

    @property
    def execute(self) -> Callable[..., Any]: ...

    @property
    def parameters(self) -> Any: ...


def mark_check(run: Callable[..., object], check: ArgumentCheck) -> None:
    """Note on a definition's ``run`` the check its arguments go through."""
    try:
        setattr(run, _MARK, check)
    except (AttributeError, TypeError):  # a callable that takes no attributes
        pass


def argument_check(definition: Checked) -> ArgumentCheck:
    """``check(arguments) -> violations`` for ``definition`` (empty: valid).

    The tool's own check when ``define_tool`` or ``@tool`` built it, else
    JSON Schema validation of its ``parameters``.
    """
    check = getattr(definition.execute, _MARK, None)
    if callable(check):
        return check  # type: ignore[no-any-return]
    from dsh_nb.tools.jsonvalue import snapshot_json, to_plain
    from dsh_nb.tools.schema._rawschema import compile_json_schema_validator

    schema = to_plain(snapshot_json(definition.parameters))
    validate: ArgumentCheck = compile_json_schema_validator(schema)
    return validate


def own_check(definition: Checked) -> ArgumentCheck | None:
    """The check ``define_tool`` or ``@tool`` built for ``definition``, or None.

    None for any other definition, whose arguments reach it unchecked: a
    caller that must not second-guess the tool (an ask rule deciding
    whether to ask) then has no check to go by.
    """
    check = getattr(definition.execute, _MARK, None)
    return check if callable(check) else None
