"""One argument parser for every command line of the package (the CLI, ``mcp``, ``eval``).

argparse's default reprints the whole usage block on a usage error, which buries the one line
that says what was wrong; here a usage error is that line, the command's name, and where to find
its help. Top-level because the command lines live in packages that must not import each other.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

# The exit status of a usage error, argparse's own.
EXIT_USAGE = 2


class UsageParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line plus a pointer to ``--help``."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n(see '{self.prog} --help')\n")
