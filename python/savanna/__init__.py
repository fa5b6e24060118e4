"""Savanna: a packet-level network simulator for size-aware queue management.

The simulator core is Rust (``savanna._core``); this package is its Python face:
``savanna.run(scenario)`` runs one simulation and returns a ``Result`` with ``.flows``,
``.queues`` and ``.summary``; the ``savanna`` command (``savanna.cli``) does the same from
a shell. See README.md and docs/.

The public names are loaded on first use (PEP 562 module ``__getattr__``), so
``import savanna`` and ``savanna --version`` load neither the core's runner nor the
emulator, and nothing imports pandas or pyarrow until records are read.
"""

from __future__ import annotations

import sys
import types

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (about 5 ms)

__all__ = ["run", "emulate", "validate", "Result", "ScenarioError", "__version__"]

# Public name -> module that defines it.
_LAZY = {
    "ScenarioError": "savanna._core",
    "__version__": "savanna._core",
    "emulate": "savanna.emulate",
    "Result": "savanna.runner",
    "run": "savanna.runner",
    "validate": "savanna.runner",
}

if TYPE_CHECKING:  # pragma: no cover
    from savanna._core import ScenarioError, __version__
    from savanna.emulate import emulate
    from savanna.runner import Result, run, validate


def __getattr__(name: str):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'savanna' has no attribute {name!r}")
    __import__(mod)  # not importlib.import_module: importing importlib costs more
    value = getattr(sys.modules[mod], name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """``savanna.emulate`` is the function, as it was when this file imported it eagerly:
    the import system binds a submodule to its package's attribute once it is loaded, so
    loading the ``savanna.emulate`` module (``import savanna.emulate``) must not replace the
    function with the module."""

    def __setattr__(self, name: str, value) -> None:
        if name == "emulate" and isinstance(value, types.ModuleType):
            value = value.emulate
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
