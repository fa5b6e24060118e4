"""``python -m savanna``: the same as the ``savanna`` command."""

from savanna.cli import entry

entry()
