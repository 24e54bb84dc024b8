"""Which ``KernelState`` is the kernel's now: the one place that knows.

``%load_ext dsh_nb`` sets it and ``%unload_ext`` clears it; everything
else in the notebook layer asks :func:`current_state`. Outside IPython a
module-level state serves scripts: same registry semantics, no displays.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.state import KernelState

__all__ = ["current_state", "loaded", "running_shell", "set_loaded"]

_EXTENSION = "dsh_nb.notebook.extension"

_state: KernelState | None = None
_script: KernelState | None = None


def loaded() -> KernelState | None:
    """The state ``%load_ext`` installed, or None."""
    return _state


def set_loaded(state: KernelState | None) -> None:
    """Record what ``%load_ext`` installed (None: it was unloaded)."""
    global _state
    _state = state


def running_shell() -> InteractiveShell | None:
    """The running IPython shell, without importing IPython if it is absent."""
    if "IPython" not in sys.modules:
        return None
    from IPython.core.getipython import get_ipython

    shell: InteractiveShell | None = get_ipython()
    return shell


def current_state() -> KernelState:
    """The kernel's state, loading the extension into a running IPython."""
    global _script
    if _state is not None:
        return _state
    shell = running_shell()
    if shell is not None:
        # Through the manager, so %unload_ext knows what was loaded.
        manager: Any = shell.extension_manager
        manager.load_extension(_EXTENSION)
        if _state is not None:
            return _state
    if _script is None:
        from dsh_nb.notebook.config import DshConfig
        from dsh_nb.notebook.state import KernelState

        _script = KernelState(None, DshConfig())
        _script.install()
    return _script
