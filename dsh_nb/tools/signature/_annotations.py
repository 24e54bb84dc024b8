"""What a parameter's annotation says beyond its type, read before pydantic.

Split out of ``signature.py``: these helpers look *at* annotations (which
parameters the pipeline fills, a plain-string description in
``Annotated``, whether ``None`` is accepted, the classes whose docstrings
describe nested fields) and rebuild ``typing.TypedDict`` classes, which
pydantic refuses before Python 3.12, as ``typing_extensions`` ones.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import sys
import types
import typing
from typing import Any

from dsh_nb.tools.errors import ToolDefinitionError
from dsh_nb.tools.signature._docstring import (
    docstring_of,
    docstring_summary,
    param_docs,
)

__all__ = [
    "accepts_none",
    "bare",
    "classes",
    "describe_classes",
    "hints",
    "injected",
    "modern_typeddicts",
    "strip",
    "text_description",
    "type_name",
]


@functools.cache
def _injectable() -> dict[type, str]:
    """The pipeline's types a parameter may ask for, and what fills it.

    Matched by identity: a public class's ``__module__`` names where users
    import it from (``dsh_nb``), not the file that defines it. Imported on
    first use, so this module does not load the pipeline at import time.
    """
    from dsh_nb.tools.context.toolcontext import ToolContext
    from dsh_nb.tools.running.abort import AbortSignal
    from dsh_nb.tools.values.execution import ToolExecution

    return {ToolExecution: "execution", AbortSignal: "signal", ToolContext: "context"}


def hints(obj: Any, where: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except NameError:
        pass
    except Exception as exc:  # noqa: BLE001 - any failure is a definition error
        raise ToolDefinitionError(f"{where}: cannot read type hints ({exc})") from None
    local = {cls.__name__: cls for cls in _injectable()}
    try:
        return typing.get_type_hints(obj, localns=local, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - any failure is a definition error
        raise ToolDefinitionError(
            f"{where}: cannot resolve type hints ({exc}); import the names the "
            "annotations use at module level"
        ) from None


def strip(tp: Any) -> Any:
    """The type under ``Annotated`` and ``X | None``."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = tp.__origin__
        elif origin is typing.Union or origin is types.UnionType:
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) != 1:
                return tp
            tp = members[0]
        else:
            return tp


def injected(tp: Any) -> str | None:
    tp = strip(tp)
    if not isinstance(tp, type):
        return None
    return _injectable().get(tp)


def text_description(tp: Any) -> str | None:
    """A plain string in ``Annotated`` (outside or inside ``X | None``)."""
    for _ in range(4):
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            found = [m for m in tp.__metadata__ if isinstance(m, str)]
            if found:
                return str(found[-1])
            tp = tp.__origin__
        elif origin is typing.Union or origin is types.UnionType:
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) != 1:
                return None
            tp = members[0]
        else:
            return None
    return None


def accepts_none(tp: Any) -> bool:
    if typing.get_origin(tp) is typing.Annotated:
        tp = tp.__origin__
    if tp in (Any, object, None, type(None)):
        return True
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return any(accepts_none(a) for a in typing.get_args(tp))
    return False


def modern_typeddicts(tp: Any, done: dict[Any, Any]) -> Any:
    """Rebuild ``typing.TypedDict`` classes, which pydantic refuses before 3.12.

    Also guards enums and ``Literal`` with ``int`` values: pydantic takes
    ``true`` for ``1`` there, which the schema (``"type": "integer"``)
    refuses. (Inside a dataclass or model the annotation is the class's own.)
    """
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        if any(type(m.value) is int for m in tp):
            return _no_bools(tp)
        return tp
    if typing.get_origin(tp) is typing.Literal:
        values = typing.get_args(tp)
        ints = any(type(v) is int for v in values)
        return (
            _no_bools(tp)
            if ints and not any(v is True or v is False for v in values)
            else tp
        )
    old_python = sys.version_info < (3, 12)
    if old_python and isinstance(tp, type) and typing.is_typeddict(tp):
        if tp in done:
            return done[tp]
        import typing_extensions as te

        typed_dict: Any = te.TypedDict
        if type(tp) is type(typed_dict("_Probe", {})):  # already modern
            return tp
        done[tp] = tp  # a recursive TypedDict keeps its own (refused) class
        hints = typing.get_type_hints(tp, include_extras=True)
        required = getattr(tp, "__required_keys__", frozenset(hints))
        fields = {
            key: (te.Required if key in required else te.NotRequired)[
                modern_typeddicts(hint, done)
            ]
            for key, hint in hints.items()
        }
        rebuilt: Any = typed_dict(tp.__name__, fields)
        rebuilt.__doc__ = tp.__doc__
        rebuilt.__module__ = tp.__module__
        done[tp] = rebuilt
        return rebuilt
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is None or not args:
        return tp
    if origin is typing.Annotated:
        annotated: Any = typing.Annotated
        key = (modern_typeddicts(tp.__origin__, done), *tp.__metadata__)
        return annotated[key]
    new = tuple(modern_typeddicts(a, done) for a in args)
    if new == args:
        return tp
    if origin is types.UnionType:
        return functools.reduce(lambda a, b: a | b, new)
    try:
        return tp.copy_with(new)
    except AttributeError:
        generic: Any = origin
        return generic[new] if isinstance(origin, type) else tp


def _no_bools(tp: type) -> Any:
    from pydantic import BeforeValidator
    from pydantic_core import PydanticCustomError

    def refuse(value: Any) -> Any:
        if type(value) is bool:
            raise PydanticCustomError("enum", "Input should be a member of the enum")
        return value

    annotated: Any = typing.Annotated
    return annotated[tp, BeforeValidator(refuse)]


def classes(tp: Any, out: dict[str, type], depth: int = 0) -> None:
    """Collect the classes whose docstrings may describe nested fields."""
    if depth > 8:
        return
    if isinstance(tp, type) and (
        dataclasses.is_dataclass(tp) or typing.is_typeddict(tp)
    ):
        if tp.__name__ in out:
            return
        out[tp.__name__] = tp
        try:
            hints = typing.get_type_hints(tp, include_extras=True)
        except Exception:  # noqa: BLE001 - descriptions are best effort
            return
        for hint in hints.values():
            classes(hint, out, depth + 1)
        return
    for arg in typing.get_args(tp):
        classes(arg, out, depth + 1)


def describe_classes(raw: dict[str, Any], classes: dict[str, type]) -> None:
    for name, node in (raw.get("$defs") or {}).items():
        cls = classes.get(name)
        props = node.get("properties") if isinstance(node, dict) else None
        if cls is None or not isinstance(props, dict):
            continue
        text = docstring_of(cls)
        if node.get("description") == text:
            node["description"] = docstring_summary(cls)
            if not node["description"]:
                del node["description"]
        docs = param_docs(text)
        for key, prop in props.items():
            if key in docs and isinstance(prop, dict) and "description" not in prop:
                prop["description"] = docs[key]


def type_name(tp: object) -> str:
    if isinstance(tp, type) and not isinstance(tp, types.GenericAlias):
        if tp.__module__ == "builtins":
            return tp.__qualname__
        return f"{tp.__module__}.{tp.__qualname__}"
    return repr(tp)


def bare(tp: Any) -> Any:
    import typing_extensions as te

    while typing.get_origin(tp) in (typing.Annotated, te.Required, te.NotRequired):
        tp = typing.get_args(tp)[0]
    return tp
