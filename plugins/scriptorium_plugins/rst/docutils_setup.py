"""Docutils configured for indexing: quiet, never halting, and tolerant of Sphinx markup.

A documentation tree written for Sphinx uses roles (``:ref:``, ``:func:``) and directives
(``.. autofunction::``, ``.. toctree::``) that plain docutils does not know. Unknown to it, they
become error messages and their text is lost; here each unknown name found in a document is
registered before parsing with a stand-in that keeps what a reader sees: a role's displayed
text, a directive's arguments and content.
"""

from __future__ import annotations

import io
import re
from typing import Any, ClassVar

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives, roles

# Sphinx's autodoc directives render API reference from docstrings at build time, as
# mkdocstrings' ``:::`` does; their bodies are written in that spelling (see ``extractor``).
AUTODOC = re.compile(
    r"^auto(?:module|class|function|method|attribute|data|exception|property|decorator)$"
)
_DIRECTIVE_NAME = re.compile(r"^[ \t]*\.\.[ \t]+([\w][\w:.+-]*)[ \t]*::", re.M)
_ROLE_NAME = re.compile(r"(?<![\w`]):([\w][\w:.+-]*):`")
# ``text <target>`` in a role: the text is what the page shows.
_TITLED = re.compile(r"^(.*?)\s*<([^<>]*)>$", re.S)
# The docutils settings of every parse: nothing reported, nothing halts, nothing read from disk.
SETTINGS: dict[str, Any] = {
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": io.StringIO(),
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "input_encoding": "unicode",
    "doctitle_xform": False,
    "sectsubtitle_xform": False,
    "docinfo_xform": False,
    "syntax_highlight": "none",
    "traceback": True,
    "_disable_config": True,
}


class _AnyOptions(dict):
    """An option spec that accepts every option (kept unchanged): Sphinx directives take many."""

    def __missing__(self, key: str):
        return directives.unchanged

    def __bool__(self) -> bool:
        return True


class StandInDirective(Directive):
    """A directive docutils does not know: its arguments as text, its content parsed as reST.

    The node carries the directive's name so the extractor can spell autodoc directives the
    way ranking recognises reference rendered from code.
    """

    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict] = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        container = nodes.container(classes=["directive"], directive=self.name)
        argument = " ".join(self.arguments).strip()
        if argument:
            container += nodes.paragraph(argument, argument, classes=["directive-argument"])
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, container)
        return [container]


def _stand_in_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """A role docutils does not know: ``:ref:`Install <install>``` shows as ``Install``."""
    shown = text
    titled = _TITLED.match(text)
    if titled and titled.group(1):
        shown = titled.group(1)
    elif titled:
        shown = titled.group(2)
    shown = shown.lstrip("~!.")
    return [nodes.inline(rawtext, shown)], []


def _known_directive(name: str) -> bool:
    if name in directives._directives:
        return True
    if name in directives._directive_registry:
        return True
    from docutils.parsers.rst.languages import en

    return name in en.directives


def _known_role(name: str) -> bool:
    if name in roles._roles or name in roles._role_registry:
        return True
    from docutils.parsers.rst.languages import en

    return name in en.roles


def register_unknown(text: str) -> None:
    """Register stand-ins for the directives and roles ``text`` uses that docutils lacks."""
    for name in {found.lower() for found in _DIRECTIVE_NAME.findall(text)}:
        if not _known_directive(name):
            directives.register_directive(name, StandInDirective)
    for name in {found.lower() for found in _ROLE_NAME.findall(text)}:
        if not _known_role(name):
            roles.register_local_role(name, _stand_in_role)


def parse(text: str, path: str) -> nodes.document:
    """The doctree of ``text``; raises whatever docutils raises on input it cannot take."""
    register_unknown(text)
    settings = dict(SETTINGS, warning_stream=io.StringIO())
    return publish_doctree(text, source_path=path, settings_overrides=settings)
