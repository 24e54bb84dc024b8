"""What ``ctx.ask(message, type=...)`` asks for: a flat form, and its answer.

A person answers a form, whatever the door: MCP's elicitation takes a flat
object schema whose properties are primitives (strings, numbers, booleans,
a choice of strings), and a notebook draws the same schema as widgets. So a
question's ``type`` is read once, here, into a :class:`Form`:

* a scalar (``str``, ``int``, ``float``, ``bool``), a ``Literal`` or an
  ``Enum`` becomes a form of one field, ``value``, and the answer is that
  field's value;
* a flat pydantic model becomes one field per model field, with its
  description, its default (SEP-1034) and its choices (SEP-1330: a
  ``Literal`` is an untitled ``enum``, an ``Enum`` a titled ``oneOf`` of
  ``const``/``title`` from its member names, a list of either a
  multi-select); a field's ``json_schema_extra`` is merged in as given
  (the legacy ``enumNames``, say); the answer is a model instance.

A form someone else wrote (a connected MCP server's elicitation) is taken
as it is; a field the answer leaves out gets the schema's ``default``, as
the person saw it pre-filled (SEP-1034).

Anything else (a nested model, a list) is refused at the ``ask`` with a
clear error: a form cannot hold it. Answers are checked with pydantic, so a
door that hands back a wrong value gets a decline, never a bad value.
"""

from __future__ import annotations

import copy
import enum
import functools
import types
import typing
from dataclasses import dataclass
from typing import Any, Final

from dsh_nb.tools._jsonschema import load_jsonschema

__all__ = ["Form", "FormError", "form_of", "schema_form", "with_defaults"]

_SCALARS: Final[dict[type, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
}
#: The field a one-value form holds its value in.
VALUE: Final = "value"


class FormError(TypeError):
    """A question's ``type`` a flat form cannot hold."""


@dataclass(frozen=True, slots=True)
class Form:
    """A question's form: its JSON Schema and how to read an answer."""

    schema: dict[str, Any]
    type: Any
    single: bool  # one field named ``value``; the answer is that value

    def read(self, content: object) -> Any:
        """The typed value of a form's content; ``ValueError`` if it is wrong."""
        import pydantic

        if not isinstance(content, dict):
            raise ValueError(f"a form's answer is an object, not {content!r}")
        if self.type is None:  # a schema as given: its content, checked
            jsonschema = load_jsonschema()
            content = with_defaults(self.schema, content)
            try:
                jsonschema.validate(content, self.schema)
            except jsonschema.ValidationError as exc:
                raise ValueError(exc.message) from None
            except jsonschema.SchemaError as exc:
                raise ValueError(
                    f"the form's schema is invalid: {exc.message}"
                ) from None
            return dict(content)
        try:
            if self.single:
                if VALUE not in content:
                    raise ValueError("the answer has no value")
                return pydantic.TypeAdapter(self.type).validate_python(
                    content[VALUE], strict=False
                )
            return self.type.model_validate(content)
        except pydantic.ValidationError as exc:
            raise ValueError(str(exc)) from None


def with_defaults(schema: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    """``content`` with each field it leaves out set to the schema's default.

    A form shows its fields pre-filled with their defaults (SEP-1034), so
    a person who accepts without touching a field accepts its default; a
    door that sends back only what was changed (or nothing) means the
    same. A field given, even as None, is kept as given.
    """
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return dict(content)
    filled = dict(content)
    for name, prop in properties.items():
        if name not in filled and isinstance(prop, dict) and "default" in prop:
            filled[name] = copy.deepcopy(prop["default"])
    return filled


def _unwrap(tp: Any) -> tuple[Any, bool]:
    """The type under ``X | None`` and whether None was allowed."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(members) == 1:
            return members[0], True
    return tp, False


def _choice(tp: Any, where: str) -> dict[str, Any] | None:
    """A ``Literal`` (untitled) or ``Enum`` (titled) of strings, else None."""
    if typing.get_origin(tp) is typing.Literal:
        choices = list(typing.get_args(tp))
        if not all(isinstance(c, str) for c in choices):
            raise FormError(
                f"{where}: a choice in a form is a Literal of strings, not {tp!r}"
            )
        return {"type": "string", "enum": choices}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        values = [m.value for m in tp]
        if not all(isinstance(v, str) for v in values):
            raise FormError(
                f"{where}: a choice in a form is an Enum of string values, "
                f"not {tp.__name__}"
            )
        return {
            "type": "string",
            "oneOf": [{"const": m.value, "title": _title(m.name)} for m in tp],
        }
    return None


def _title(name: str) -> str:
    return name.replace("_", " ").capitalize()


def _field(tp: Any, where: str) -> dict[str, Any]:
    """The JSON Schema of one primitive field, or :class:`FormError`."""
    tp, _ = _unwrap(tp)
    choice = _choice(tp, where)
    if choice is not None:
        return choice
    origin = typing.get_origin(tp)
    if origin in (list, set, frozenset, tuple) and len(typing.get_args(tp)) == 1:
        # A multi-select: a list of choices (SEP-1330).
        item = _choice(typing.get_args(tp)[0], where)
        if item is not None:
            if "oneOf" in item:
                item = {"anyOf": item["oneOf"]}
            return {"type": "array", "items": item}
    if isinstance(tp, type) and issubclass(tp, bool):
        return {"type": "boolean"}
    for scalar, name in _SCALARS.items():
        if tp is scalar:
            return {"type": name}
    raise FormError(
        f"{where}: a form holds str, int, float, bool, a Literal or an Enum "
        f"(or a list of one), not {getattr(tp, '__name__', tp)!r}"
    )


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    return value


@functools.lru_cache(maxsize=256)
def _cached(tp: Any) -> Form:
    return _build(tp)


def schema_form(schema: object) -> Form:
    """A form from a flat JSON Schema object as it is (an MCP elicitation's)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise FormError(f"a form's schema is a JSON Schema object, not {schema!r}")
    return Form(schema=dict(schema), type=None, single=False)


def form_of(tp: Any) -> Form:
    """The :class:`Form` of a question's ``type``; :class:`FormError` if none."""
    try:
        return _cached(tp)
    except TypeError as exc:
        if isinstance(exc, FormError):
            raise
        return _build(tp)  # an unhashable annotation: built each time


def _build(tp: Any) -> Form:
    import pydantic

    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, info in tp.model_fields.items():
            key = info.alias or name
            prop = _field(info.annotation, f"{tp.__name__}.{name}")
            extra = info.json_schema_extra
            if isinstance(extra, dict):
                prop.update(extra)  # e.g. the legacy ``enumNames``
            if info.title:
                prop["title"] = info.title
            if info.description:
                prop["description"] = info.description
            if info.is_required():
                required.append(key)
            else:
                default = info.get_default(call_default_factory=True)
                if default is not None:
                    prop["default"] = _plain(default)
            properties[key] = prop
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        return Form(schema=schema, type=tp, single=False)
    prop = _field(tp, "ask")
    return Form(
        schema={"type": "object", "properties": {VALUE: prop}, "required": [VALUE]},
        type=tp,
        single=True,
    )
