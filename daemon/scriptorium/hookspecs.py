"""Every plugin hook Scriptorium calls, in one place.

Plugins implement these with ``@scriptorium.hookimpl``. Built-in behaviour (the Markdown and code
sources, the implementation ranking mode) is registered through exactly the same hooks and the
same ``scriptorium`` entry-point group as third-party plugins.

Registration hooks receive a ``register`` callback rather than returning values, so one plugin
can contribute several things and the manager can reject duplicates with a clear message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from scriptorium.blocks.extractors import BlockExtractor
    from scriptorium.ranking.modes import RankingMode

hookspec = pluggy.HookspecMarker("scriptorium")

# ---------------------------------------------------------------------------------------------
# Registration: called once when the plugin manager is built.
# ---------------------------------------------------------------------------------------------


@hookspec
def scriptorium_register_source_kinds(register: Callable[..., None]) -> None:
    """Register source kinds: ``register(kind_name, factory, settings=None)``.

    ``factory(config: SourceConfig, context: SourceContext) -> Source`` builds one configured
    source. The kind name is what ``kind = "..."`` selects in the configuration file.
    ``settings`` declares the kind's own ``[[sources]]`` keys (a sequence of
    ``scriptorium.schema.Key``; default: the factory's ``settings`` attribute): any other key in
    a source of this kind is refused at start-up, naming the closest declared one, and values of
    the wrong type are refused with one sentence. A kind that declares nothing (``None``) gets
    its keys unchecked in ``config.options``.
    """


@hookspec
def scriptorium_register_ranking_modes(register: Callable[[RankingMode], None]) -> None:
    """Register ranking modes: ``register(mode)``; ``mode.name`` is what ``Search.mode`` selects."""


@hookspec
def scriptorium_register_block_extractors(register: Callable[[BlockExtractor], None]) -> None:
    """Register block extractors that cut documents into blocks: ``register(extractor)``.

    Extractors are consulted in ascending ``priority``; the first whose ``accepts(path,
    corpus)`` is true cuts the document. ``extractor.version`` is stored in the index so a
    changed extractor forces re-extraction.
    """
