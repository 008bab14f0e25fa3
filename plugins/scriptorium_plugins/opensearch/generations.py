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
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from opensearchpy import OpenSearch, helpers

from scriptorium.plugin.unstable import fault_pause
from scriptorium_plugins.opensearch.documents import MAPPING
from scriptorium_plugins.opensearch.locking import DEFAULT_LOCK_SECONDS, PushLock

log = logging.getLogger(__name__)

BULK_CHUNK_DOCS = 1000
BULK_CHUNK_BYTES = 8 * 1024 * 1024
# How long a bulk request waits for a shard's primary (one moving after a node left).
BULK_WAIT = "30s"
# Bulk requests in flight at once: one indexed while the next is cut and encoded.
BULK_THREADS = 2
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
    fill_replicas: int = 0,
    threads: int = BULK_THREADS,
    lock_seconds: float = DEFAULT_LOCK_SECONDS,
) -> PushSummary:
    """Write one generation from ``batches()`` (each batch the bulk actions of one document).

    The index fills with ``fill_replicas`` replicas and no refreshes (each replica would index
    every block again, each refresh cut a segment), then gets its ``replicas``, is refreshed and
    waited on until every copy is active: only then is the alias moved. A fill without replicas
    that loses a node loses shards: the push then starts over once with every replica placed
    before the first write (a node lost then costs a promotion, never a shard). One push per
    alias at a time: the lock (``locking``) refuses a second pusher.
    """
    plan = _Plan(shards, replicas, keep, timeout, chunk, min(fill_replicas, replicas), threads)
    lock = PushLock(client, alias, lock_seconds).acquire()
    try:
        try:
            return _push_once(client, alias, batches, plan, lock)
        except ShardsLost as exc:
            if plan.fill_replicas >= replicas:
                raise PushError(str(exc)) from None
            log.warning("%s; writing again with every replica placed first", exc)
            return _push_once(client, alias, batches, replace(plan, fill_replicas=replicas), lock)
    finally:
        lock.release()


class ShardsLost(PushError):
    """A fill without replicas lost a node and with it the shards it held."""


@dataclass(frozen=True, slots=True)
class _Plan:
    shards: int
    replicas: int
    keep: int
    timeout: float
    chunk: int
    fill_replicas: int
    threads: int


def _push_once(
    client: OpenSearch,
    alias: str,
    batches: Callable[[], Iterable[list[dict[str, Any]]]],
    plan: _Plan,
    lock: PushLock,
) -> PushSummary:
    shards, replicas, keep, timeout = plan.shards, plan.replicas, plan.keep, plan.timeout
    chunk, fill_replicas, threads = plan.chunk, plan.fill_replicas, plan.threads
    started = time.monotonic()
    index = new_index_name(alias)
    settings = {
        "number_of_shards": shards,
        "number_of_replicas": fill_replicas,
        "refresh_interval": "-1",
    }
    client.indices.create(index=index, body={"settings": settings, "mappings": MAPPING})
    counts = {"documents": 0, "blocks": 0, "bytes": 0}
    try:
        # With replicas to fill, every one started before the first write: a node lost
        # mid-load then only costs a promotion, never the shard.
        _wait_active(client, index, timeout, whole=fill_replicas > 0)
        refused = _send(
            client, index, batches(), chunk, timeout, counts, threads, lock, fill_replicas
        )
        for _ in range(RESEND_ROUNDS):
            if not refused:
                break
            _check_shards(client, index, fill_replicas)
            log.warning("re-sending %d actions the cluster refused", len(refused))
            _wait_active(client, index, timeout)
            refused = _send(
                client,
                index,
                batches(),
                chunk,
                timeout,
                None,
                threads,
                lock,
                fill_replicas,
                only=refused,
            )
        if refused:
            _check_shards(client, index, fill_replicas)
            raise PushError(f"{len(refused)} documents were refused by the cluster")
        _check_shards(client, index, fill_replicas)
        client.indices.refresh(index=index, request_timeout=timeout + 10)
        # Committed to disk before the replicas are added: a replica then copies the segment
        # files, where an unflushed primary would have it replay every write from the translog
        # (indexing every block a second time).
        client.indices.flush(index=index, request_timeout=max(timeout, 120.0) + 10)
        stored = client.count(index=index)["count"]
        expected = counts["documents"] + counts["blocks"]
        if stored != expected:
            _check_shards(client, index, fill_replicas)
            raise PushError(f"index {index} holds {stored} documents, {expected} were written")
        client.indices.put_settings(
            index=index,
            body={"index": {"number_of_replicas": replicas, "refresh_interval": None}},
        )
        # The new generation is whole: every primary and, where there are the nodes, every
        # replica active, before readers are moved to it.
        _wait_active(client, index, max(timeout, 120.0), whole=replicas > 0)
        lock.renew()
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


def _check_shards(client: OpenSearch, index: str, fill_replicas: int) -> None:
    """Raise ``ShardsLost`` when a fill without replicas has a primary missing (red)."""
    if fill_replicas:
        return
    health = client.cluster.health(index=index, params={"timeout": "5s"}, request_timeout=30)
    if health.get("status") == "red":
        raise ShardsLost(f"index {index} lost a shard while it filled (a node left)")


class _Shared:
    """One action stream pulled by several sending threads; the fault pause holds them all."""

    def __init__(self, actions: Iterator[dict[str, Any]]) -> None:
        self.actions = actions
        self.lock = threading.Lock()
        self.paused = False
        self.stopped = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        with self.lock:
            if self.stopped:  # another sender failed: the push stops
                raise StopIteration
            return next(self.actions)

    def acknowledged(self) -> None:
        """The first acknowledged chunk, the rest not yet sent: "mid-load" for a test."""
        with self.lock:
            if not self.paused:
                self.paused = True
                fault_pause("opensearch.push.bulk")


def _send(
    client: OpenSearch,
    index: str,
    batches: Iterable[list[dict[str, Any]]],
    chunk: int,
    timeout: float,
    counts: dict[str, int] | None,
    threads: int,
    lock: PushLock,
    fill_replicas: int,
    only: set[str] | None = None,
) -> set[str]:
    """Bulk-write the actions (or only those with ids in ``only``) over ``threads`` streams,
    so the cluster indexes one chunk while the next is cut and encoded; the ids refused."""

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

    shared = _Shared(stream())
    refused: set[str] = set()

    def sender() -> None:
        try:
            for ok, item in helpers.streaming_bulk(
                client,
                shared,
                chunk_size=chunk,
                max_chunk_bytes=BULK_CHUNK_BYTES,
                raise_on_error=False,
                raise_on_exception=False,
                max_retries=3,
                request_timeout=timeout,
                params={"timeout": BULK_WAIT},
            ):
                if not shared.paused:
                    shared.acknowledged()
                lock.renew()
                if not ok:
                    op = next(iter(item.values())) if isinstance(item, dict) and item else {}
                    refused.add(str(op.get("_id", "")))
                    # A fill without replicas that lost a primary stops at once.
                    _check_shards(client, index, fill_replicas)
        except BaseException:
            shared.stopped = True
            raise

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        for future in [pool.submit(sender) for _ in range(max(1, threads))]:
            future.result()
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
