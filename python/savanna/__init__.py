"""Savanna: a packet-level network simulator for size-aware queue management.

The simulator core is Rust (``savanna._core``); this package is its Python face:
``savanna.run(scenario)`` runs one simulation and returns a ``Result`` with ``.flows``,
``.queues`` and ``.summary``; the ``savanna`` command (``savanna.cli``) does the same from
a shell. See README.md and docs/.
"""

from savanna._core import ScenarioError, __version__
from savanna.emulate import emulate
from savanna.runner import Result, run, validate

__all__ = ["run", "emulate", "validate", "Result", "ScenarioError", "__version__"]
