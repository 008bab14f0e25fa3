"""``scriptorium index push`` for an ``opensearch`` source: cut its tree, write a generation.

The tree is read by a source of the local kind the source ``reads`` (built by the command from
the same registry), so documents are cut, and tokens made, exactly as a local index would have
them; ``generations.push`` does the writing and the alias swap.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from opensearchpy.exceptions import ConnectionError as ClusterConnectionError

from scriptorium.plugin import SourceConfig
from scriptorium.plugin.unstable import helper_count, load_plugins, load_streaming
from scriptorium_plugins.opensearch import generations
from scriptorium_plugins.opensearch.documents import actions
from scriptorium_plugins.opensearch.locking import LockHeld

if TYPE_CHECKING:
    from scriptorium_plugins.opensearch.source import OpenSearchSource

log = logging.getLogger(__name__)


def push_source(
    source: OpenSearchSource, build_reader: Callable[[SourceConfig], Any], workers: int = 0
) -> dict[str, Any]:
    """``workers`` is ``[server] build_workers``: the processes that cut files (0: per core)."""
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
    items = [(source.name, stat.path) for stat in reader.list_files()]
    # A push loads in this process too (between sends), so one helper fewer than a build's,
    # whose building process only writes.
    helpers = max(0, helper_count(workers, len(items)) - 1)

    def batches() -> Iterator[list[dict[str, Any]]]:
        # Cut and tokenized by the local builder's helper processes, chunk by chunk, while
        # this process encodes and sends what they have returned.
        for chunk in load_streaming(
            items,
            sources={source.name: reader},
            options=token_options,
            fingerprint=reader.context.extractors.fingerprint,
            load_plugins=load_plugins,
            helpers=helpers,
            on_fallback=lambda why: log.warning("pushing without helper processes: %s", why),
        ):
            for _, loaded in chunk:
                if loaded.doc is not None:
                    page = reader.page_location(loaded.doc.path)
                    yield actions(loaded.doc, page, "", token_options, loaded.tokens)

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
            fill_replicas=int(config.options.get("fill_replicas", 0)),
            threads=int(config.options.get("bulk_threads", generations.BULK_THREADS)),
            lock_seconds=float(
                config.options.get("lock_seconds", generations.DEFAULT_LOCK_SECONDS)
            ),
        )
    except LockHeld as exc:
        raise generations.PushError(f"{exc}; nothing was changed") from None
    except ClusterConnectionError:
        raise generations.PushError(
            f"no node of {', '.join(source.hosts)} answered; nothing was changed"
        ) from None
    return summary.as_dict()
