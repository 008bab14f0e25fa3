"""What a project depends on: one record per dependency, whatever its ecosystem.

Readers (one module per ecosystem) turn manifests and lock files into :class:`Declared`
entries; locators find where each is installed. The source indexes the installed files of
each as ``name@version:path``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ECOSYSTEMS = ("python", "node", "go", "rust")


@dataclass(frozen=True, slots=True)
class Declared:
    """A dependency as the manifest and lock file state it."""

    name: str
    #: The version the lock file pins ("" when only a manifest names it).
    version: str
    #: Named in the manifest itself (not only pulled in by another dependency).
    direct: bool


@dataclass(frozen=True, slots=True)
class InstalledFile:
    """One file of an installed dependency: its path inside the library and on disk."""

    path: str
    absolute: Path
    #: A synthesised document (a wheel's long description) rather than a file as it is.
    synthesised: bool = False


@dataclass(slots=True)
class Dependency:
    """A declared dependency and, when it is installed, where and with which files."""

    ecosystem: str
    name: str
    #: The pinned version (the lock file's), else the installed one.
    version: str
    direct: bool
    #: The version found installed ("" when it is not installed).
    installed_version: str = ""
    #: The folder it is installed in (a site-packages, a node_modules/<name>, a module cache dir).
    location: Path | None = None
    files: list[InstalledFile] = field(default_factory=list)
    #: Where the distribution says its documentation is published (its metadata's URLs).
    documentation_urls: tuple[str, ...] = ()

    @property
    def installed(self) -> bool:
        return self.location is not None

    @property
    def label(self) -> str:
        """``name@version`` as locations carry it: the version whose files are read."""
        return f"{self.name}@{self.installed_version or self.version}"


def normalize_python_name(name: str) -> str:
    """PEP 503: ``Typing_Extensions`` and ``typing.extensions`` are ``typing-extensions``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def library_key(name: str) -> str:
    """How ``--library`` compares names: case-folded, runs of ``-_.`` alike."""
    return normalize_python_name(name)
