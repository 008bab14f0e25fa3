"""``scriptorium index push`` for an ``opensearch`` source: cut its tree, write a generation.

The tree is read by a source of the local kind the source ``reads`` (built by the command from
the same registry), so documents are cut, and tokens made, exactly as a local index would have
them; ``generations.push`` does the writing and the alias swap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from opensearchpy.exceptions import ConnectionError as ClusterConnectionError

from scriptorium.plugin import SourceConfig
from scriptorium_plugins.opensearch import generations
from scriptorium_plugins.opensearch.documents import actions

if TYPE_CHECKING:
    from scriptorium_plugins.opensearch.source import OpenSearchSource


def push_source(
    source: OpenSearchSource, build_reader: Callable[[SourceConfig], Any]
) -> dict[str, Any]:
    config = source.config
    if config.root is None:
        raise ValueError(f"source {source.name!r}: a push needs root (the tree to read)")
    options = {
        key: config.options[key]
        for key in ("include", "exclude")
        if config.options.get(key) is not None
    }
    reader = build_reader(
        SourceConfig(
            name=source.name,
            kind=source.reads,
            root=config.root,
            source_class=config.source_class,
            default=config.default,
            url_base=config.url_base,
            options=options,
        )
    )
    token_options = source.ranking.token_options()

    def batches() -> Iterator[list[dict[str, Any]]]:
        for stat in reader.list_files():
            doc = reader.load(stat.path)
            if doc is not None:
                yield actions(doc, reader.page_location(doc.path), "", token_options)

    try:
        summary = generations.push(
            source.client,
            source.alias,
            batches,
            shards=int(config.options.get("shards", 1)),
            replicas=int(config.options.get("replicas", 1)),
            keep=int(config.options.get("keep_generations", 2)),
            timeout=max(source.timeout, 60.0),
            chunk=int(config.options.get("bulk_actions", generations.BULK_CHUNK_DOCS)),
        )
    except ClusterConnectionError:
        raise generations.PushError(
            f"no node of {', '.join(source.hosts)} answered; nothing was changed"
        ) from None
    return summary.as_dict()
