"""Generations in the cluster: a new index per push, an alias swapped when it is complete.

A push writes every block into a fresh index named ``<alias>-<stamp>``, refreshes it, waits
until its shards (and replicas) are active, checks the count, and only then moves the alias in
one ``_aliases`` call (remove from the old index, add to the new: atomic in the cluster state).
Readers always search the alias, so they see the old generation or the new one, never a half
one. Older generations past ``keep`` are deleted afterwards; a push that fails deletes its own
unfinished index and leaves the alias where it was.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from opensearchpy import OpenSearch, helpers

from scriptorium.plugin import fault_pause
from scriptorium_plugins.opensearch.documents import MAPPING

log = logging.getLogger(__name__)

BULK_CHUNK_DOCS = 500
BULK_CHUNK_BYTES = 8 * 1024 * 1024
RESEND_ROUNDS = 5


class PushError(RuntimeError):
    """A push that could not complete; the alias still names the previous generation."""


@dataclass(slots=True)
class PushSummary:
    alias: str
    index: str
    documents: int
    blocks: int
    bytes: int
    seconds: float
    pruned: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "alias": self.alias,
            "index": self.index,
            "documents": self.documents,
            "blocks": self.blocks,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "pruned": ",".join(self.pruned),
        }


def new_index_name(alias: str) -> str:
    """Sortable by time, unique across pushers started in the same millisecond."""
    return f"{alias}-{time.strftime('%Y%m%d%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"


def generations(client: OpenSearch, alias: str) -> list[str]:
    """This alias's generation indices, oldest first."""
    found = client.indices.get(index=f"{alias}-*", expand_wildcards="open", ignore_unavailable=True)
    return sorted(found)


def current(client: OpenSearch, alias: str) -> str | None:
    """The index the alias names now (None before the first push)."""
    if not client.indices.exists_alias(name=alias):
        return None
    names = sorted(client.indices.get_alias(name=alias))
    return names[-1] if names else None


def push(
    client: OpenSearch,
    alias: str,
    batches: Callable[[], Iterable[list[dict[str, Any]]]],
    *,
    shards: int,
    replicas: int,
    keep: int,
    timeout: float,
    chunk: int = BULK_CHUNK_DOCS,
) -> PushSummary:
    """Write one generation from ``batches()`` (each batch the bulk actions of one document).

    ``batches`` is called again to re-send what the cluster refused (a node lost mid-load:
    a primary moving answers 503 for a moment); ids make a re-sent action overwrite itself.
    """
    started = time.monotonic()
    index = new_index_name(alias)
    settings = {
        "number_of_shards": shards,
        "number_of_replicas": replicas,
        "refresh_interval": "-1",
    }
    client.indices.create(index=index, body={"settings": settings, "mappings": MAPPING})
    counts = {"documents": 0, "blocks": 0, "bytes": 0}
    try:
        # Every replica started before the first write: a node lost mid-load then only costs
        # a promotion, never the shard (a replica still recovering cannot take over).
        _wait_active(client, index, timeout, whole=replicas > 0)
        refused = _send(client, index, batches(), chunk, timeout, counts)
        for _ in range(RESEND_ROUNDS):
            if not refused:
                break
            log.warning("re-sending %d actions the cluster refused", len(refused))
            _wait_active(client, index, timeout)
            refused = _send(client, index, batches(), chunk, timeout, None, only=refused)
        if refused:
            raise PushError(f"{len(refused)} documents were refused by the cluster")
        client.indices.put_settings(index=index, body={"index": {"refresh_interval": "1s"}})
        client.indices.refresh(index=index)
        _wait_active(client, index, timeout)
        stored = client.count(index=index)["count"]
        expected = counts["documents"] + counts["blocks"]
        if stored != expected:
            raise PushError(f"index {index} holds {stored} documents, {expected} were written")
        swap(client, alias, index)
    except Exception:
        try:
            client.indices.delete(index=index, ignore_unavailable=True)
        except Exception as exc:  # the push's own failure is the one to report
            log.warning("could not delete the unfinished index %s: %s", index, exc)
        raise
    pruned = prune(client, alias, keep)
    return PushSummary(
        alias=alias,
        index=index,
        documents=counts["documents"],
        blocks=counts["blocks"],
        bytes=counts["bytes"],
        seconds=time.monotonic() - started,
        pruned=pruned,
    )


def _send(
    client: OpenSearch,
    index: str,
    batches: Iterable[list[dict[str, Any]]],
    chunk: int,
    timeout: float,
    counts: dict[str, int] | None,
    only: set[str] | None = None,
) -> set[str]:
    """Bulk-write the actions (or only those with ids in ``only``); the ids refused."""

    def stream() -> Iterator[dict[str, Any]]:
        for batch in batches:
            if counts is not None:
                counts["documents"] += 1
                counts["blocks"] += len(batch) - 1
            for action in batch:
                if only is not None and action["_id"] not in only:
                    continue
                action["_source"]["generation"] = index
                if counts is not None:
                    source = action["_source"]
                    counts["bytes"] += len(source.get("body") or "")
                    counts["bytes"] += len((source.get("document") or {}).get("text") or "")
                yield {"_index": index, **action}

    refused: set[str] = set()
    first = True
    for ok, item in helpers.streaming_bulk(
        client,
        stream(),
        chunk_size=chunk,
        max_chunk_bytes=BULK_CHUNK_BYTES,
        raise_on_error=False,
        raise_on_exception=False,
        max_retries=3,
        request_timeout=timeout,
    ):
        if first:
            # The first chunk is acknowledged, the rest not yet sent: "mid-load" for a test.
            fault_pause("opensearch.push.bulk")
            first = False
        if not ok:
            op = next(iter(item.values())) if isinstance(item, dict) and item else {}
            refused.add(str(op.get("_id", "")))
    return refused


def _wait_active(client: OpenSearch, index: str, timeout: float, whole: bool = False) -> None:
    """Until every primary of ``index`` is active (yellow), or with ``whole`` every replica
    too (green), when the cluster has the nodes to place them."""
    status = "yellow"
    if whole:
        nodes = int(client.cluster.health().get("number_of_data_nodes", 0))
        replicas = int(
            client.indices.get_settings(index=index)[index]["settings"]["index"][
                "number_of_replicas"
            ]
        )
        if nodes > replicas:
            status = "green"
        else:
            log.warning("%d data nodes cannot hold %d replicas of %s", nodes, replicas, index)
    health = client.cluster.health(
        index=index,
        params={"wait_for_status": status, "timeout": f"{int(timeout)}s"},
        request_timeout=timeout + 10,
    )
    if health.get("timed_out"):
        raise PushError(f"index {index} did not turn {status} within {timeout:.0f}s")


def swap(client: OpenSearch, alias: str, index: str) -> None:
    """Point ``alias`` at ``index`` alone, in one atomic cluster-state change."""
    actions: list[dict[str, Any]] = [{"remove": {"index": f"{alias}-*", "alias": alias}}]
    if not client.indices.exists_alias(name=alias):
        actions = []
    actions.append({"add": {"index": index, "alias": alias}})
    client.indices.update_aliases(body={"actions": actions})


def prune(client: OpenSearch, alias: str, keep: int) -> list[str]:
    """Delete generations older than the ``keep`` newest (never the one the alias names, nor
    a newer one: another push may be writing it)."""
    serving = current(client, alias)
    if serving is None:
        return []
    names = [n for n in generations(client, alias) if n < serving]
    old = names[: max(0, len(names) - max(0, keep - 1))]
    for name in old:
        client.indices.delete(index=name, ignore_unavailable=True)
    return old
