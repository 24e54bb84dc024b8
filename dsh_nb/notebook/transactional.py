"""Settings whose every value is its own transaction.

traitlets applies a config section in one go and rolls all of it back on
the first rejected value; IPython's ``%config`` only logs that, after the
shell has merged the value into its own config, so the next ``%load_ext``
or ``%reload_ext`` (a new configurable built from the shell's config)
raised on it. A :class:`TransactionalConfigurable` is built with
:meth:`~TransactionalConfigurable.from_shell` and applies each value on
its own: a rejected one is one line on stderr, the value in force stays,
and the rejected one is struck from the configs that hold it.
``DshConfig`` and ``DshChat`` are both such settings.
"""

from __future__ import annotations

import sys
from copy import deepcopy
from typing import Any, TypeVar

from traitlets.config import Config, Configurable

from dsh_nb.tools.shown import shown

__all__ = ["TransactionalConfigurable"]

_C = TypeVar("_C", bound="TransactionalConfigurable")


class TransactionalConfigurable(Configurable):
    """A Configurable that applies, and refuses, one value at a time."""

    @classmethod
    def from_shell(cls: type[_C], shell: Any) -> _C:
        """The settings for ``shell``, each configured value applied on its own.

        Built empty, then given the shell's section for this class through
        :meth:`update_config`, so a bad value in ``ipython_config.py`` is
        reported and skipped instead of failing the whole ``%load_ext``.
        """
        config = cls(parent=shell, config=Config())
        parent_config = getattr(shell, "config", None)
        if isinstance(parent_config, Config):
            config.update_config(parent_config)
        return config

    def update_config(self, config: Config) -> None:
        """Apply each value of this class's section as its own transaction.

        traitlets applies a section in one go and rolls all of it back on
        the first rejected value, which ``%config`` only logs after the shell
        has merged the value into its own config; the next load would then
        raise again. Here a value the trait, a ``@validate`` or an
        ``@observe`` refuses is reported in one line, the value in force
        stays, and the rejected one is struck from the configs that hold it.
        """
        section = type(self).__name__
        if section not in config:
            return
        traits = self.traits(config=True)
        for name, value in dict(config[section]).items():
            before = getattr(self, name) if name in traits else None
            try:
                super().update_config(Config({section: {name: value}}))
            except Exception as exc:  # noqa: BLE001 - a rejected value is reported
                if name in traits and getattr(self, name) is not before:
                    # An observer refused it after the trait took it: undo.
                    setattr(self, name, before)
                self._reject(name, value, exc)

    def _reject(self, name: str, value: object, exc: BaseException) -> None:
        kept = getattr(self, name)
        reason = " ".join(str(exc).split()).rstrip(".") or type(exc).__name__
        print(
            f"{type(self).__name__}.{name}: rejected {shown(value, 60)}: {reason}; "
            f"keeping {kept!r}",
            file=sys.stderr,
        )
        self._strike(name)
        # %config updates configurables in name order, so the shell merges
        # the value into its config after us: strike it again once the cell
        # is over.
        events = getattr(self.parent, "events", None)
        if events is not None:

            def strike_later() -> None:
                events.unregister("post_execute", strike_later)
                self._strike(name)

            events.register("post_execute", strike_later)

    def _strike(self, name: str) -> None:
        """Put the value in force back where a rejected one was stored."""
        section = type(self).__name__
        kept = getattr(self, name)
        holders = [self.config]
        parent_config = getattr(self.parent, "config", None)
        if isinstance(parent_config, Config):
            holders.append(parent_config)
        for config in holders:
            if section in config and name in config[section]:
                config[section][name] = deepcopy(kept)
