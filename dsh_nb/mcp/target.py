"""``MODULE[:ATTR]``: which registry ``python -m dsh_nb serve`` serves.

``MODULE`` is a dotted module name (found on ``sys.path``, the current
folder first, as ``python -m`` has it) or a path to a ``.py`` file (its
folder goes at the end of ``sys.path``, so its sibling imports work). ``ATTR`` is a
dotted attribute of it: a :class:`~dsh_nb.tools.registry.ToolRegistry`,
which is served as it is (its policies, listeners and guards included), a
module, or a single tool; a module's ``@tool`` functions are collected into
a new registry, in definition order. Without ``ATTR`` the module's
``registry`` is served if it is a ``ToolRegistry``, else its tools.

Every mistake is a :class:`TargetError` whose text names the target and
the fix: the command line shows it as one line and exits 2.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.errors import error_message
from dsh_nb.tools.registry import ToolRegistry

__all__ = [
    "Target",
    "TargetError",
    "import_target_module",
    "load_target",
    "module_file",
    "short_name",
]


_PRIVATE_PREFIX = "_dsh_nb_served_"


def _shown(module: ModuleType) -> str:
    """The module's name as the person gave it (a file's stem)."""
    return module.__name__.removeprefix(_PRIVATE_PREFIX)


class TargetError(ValueError):
    """``MODULE[:ATTR]`` names nothing that can be served."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """What was found: the registry, and how to name it to a person."""

    spec: str
    registry: ToolRegistry
    collected: bool


def _split(spec: str) -> tuple[str, str]:
    if not isinstance(spec, str) or not spec.strip():
        raise TargetError("name a module to serve, as MODULE or MODULE:ATTR")
    # A Windows drive letter aside, the last colon separates the attribute.
    module, sep, attr = spec.rpartition(":")
    if not sep or not module or "/" in attr or "\\" in attr:
        return spec, ""
    return module, attr


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise TargetError(f"no such file: {str(path)!r}")
    folder = str(path.parent.resolve())
    if folder not in sys.path:
        # Last, not first: a sibling named like a package (``mcp.py``) must
        # not shadow what the server itself imports.
        sys.path.append(folder)
    # A private name: a file called email.py, json.py or mcp.py must not
    # take the place of the module the server itself imports by that name.
    name = _PRIVATE_PREFIX + "".join(c if c.isalnum() else "_" for c in path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"{str(path)!r} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def import_target_module(name: str) -> ModuleType:
    """Import a module by name or a ``.py`` file by path, as ``serve`` does."""
    try:
        if name.endswith(".py") or "/" in name or "\\" in name:
            return _import_file(Path(name))
        return importlib.import_module(name)
    except TargetError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            raise TargetError(
                f"no module named {name!r} (looked in the current folder and on "
                "sys.path); run from the module's folder, or give its file's "
                "path, e.g. tools.py"
            ) from None
        raise TargetError(f"importing {name!r} failed: {error_message(exc)}") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the module's own failure
        raise TargetError(
            f"importing {name!r} failed: {type(exc).__name__}: {error_message(exc)}"
        ) from None


def _collect(module: ModuleType) -> ToolRegistry:
    # Sync bodies in worker threads, as in the notebook: one slow tool must
    # not stall every other client of the server.
    registry = ToolRegistry(sync_tools="thread")
    seen: set[int] = set()
    for attr, value in vars(module).items():
        if not isinstance(value, ToolDefinition) or id(value) in seen:
            continue
        seen.add(id(value))
        try:
            registry.register(value)
        except Exception as exc:  # noqa: BLE001 - named, with the attribute
            raise TargetError(
                f"{_shown(module)}.{attr}: {error_message(exc)}"
            ) from None
    if not seen:
        raise TargetError(
            f"module {_shown(module)!r} has no @tool functions and no "
            "ToolRegistry named 'registry'; decorate functions with "
            "dsh_nb.tool, or name the registry as MODULE:ATTR"
        )
    return registry


def _resolve(module: ModuleType, attr: str, spec: str) -> object:
    value: object = module
    for part in attr.split("."):
        if not part.isidentifier():
            raise TargetError(f"{spec!r}: {attr!r} is not a dotted attribute name")
        try:
            value = getattr(value, part)
        except AttributeError:
            raise TargetError(
                f"{spec!r}: module {_shown(module)!r} has no attribute {attr!r}"
            ) from None
    return value


def load_target(spec: str) -> Target:
    """Import ``MODULE[:ATTR]`` and find the registry to serve."""
    name, attr = _split(spec)
    module = import_target_module(name)
    value: object
    if attr:
        value = _resolve(module, attr, spec)
    else:
        default = getattr(module, "registry", None)
        value = default if isinstance(default, ToolRegistry) else module
    if isinstance(value, ToolRegistry):
        return Target(spec=spec, registry=value, collected=False)
    if isinstance(value, ModuleType):
        return Target(spec=spec, registry=_collect(value), collected=True)
    if isinstance(value, ToolDefinition):
        registry = ToolRegistry(sync_tools="thread")
        registry.register(value)
        return Target(spec=spec, registry=registry, collected=True)
    raise TargetError(
        f"{spec!r}: {attr!r} is a {type(value).__name__}, not a ToolRegistry, "
        "a module or a @tool function"
    )


def module_file(spec: str) -> str:
    """``spec`` with its module made findable from any folder, if it can be.

    A module that is a plain file on the current folder becomes its absolute
    path, so a client that launches the server from elsewhere finds it; an
    installed module keeps its dotted name. Nothing is imported.
    """
    name, attr = _split(spec)
    suffix = f":{attr}" if attr else ""
    if name.endswith(".py") or "/" in name or "\\" in name:
        return f"{Path(name).resolve()}{suffix}"
    try:
        found = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        found = None
    origin = getattr(found, "origin", None)
    if found is None or not origin or "." in name:
        return spec
    path = Path(origin)
    if path.parent.resolve() == Path.cwd().resolve() and path.suffix == ".py":
        return f"{path.resolve()}{suffix}"
    return spec


def short_name(spec: str) -> str:
    """A name for people and settings files: ``tools`` for ``pkg/tools.py``."""
    name, _ = _split(spec)
    stem = Path(name).name.removesuffix(".py").split(".")[-1]
    cleaned = "".join(c if c.isalnum() or c in "-_" else "-" for c in stem)
    return cleaned or "dsh_nb"
