"""One pusher per alias: a lock document created exclusively in the cluster, with an expiry.

Two pushes of the same source would each write a generation and swap the alias in turn, and
each would prune what the other still writes. Before it creates its index a push creates the
document ``<alias>`` in ``LOCK_INDEX`` with ``op_type=create``, which the cluster accepts for
exactly one caller; the other is refused at once with who holds it and until when. The lock
carries an expiry (renewed while the push writes), so a pusher that died (killed, machine lost)
blocks the next one only until then: an expired lock is taken over with a write conditioned on
its sequence number, which again only one caller wins. The index is not an ``<alias>-*`` name,
so it is never taken for a generation.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConflictError, NotFoundError, RequestError

LOCK_INDEX = "scriptorium_push_locks"
DEFAULT_LOCK_SECONDS = 600.0

_MAPPING = {
    "dynamic": "strict",
    "properties": {
        "owner": {"type": "keyword"},
        "acquired_at": {"type": "double"},
        "expires_at": {"type": "double"},
    },
}


class LockHeld(RuntimeError):
    """Another push of this alias is under way (or died less than its expiry ago)."""


@dataclass(slots=True)
class PushLock:
    client: OpenSearch
    alias: str
    seconds: float
    owner: str = ""
    seq_no: int = 0
    primary_term: int = 0
    renewed: float = 0.0
    guard: threading.Lock = field(default_factory=threading.Lock)

    def acquire(self) -> PushLock:
        """Take the lock, or raise ``LockHeld`` naming its holder."""
        _ensure_index(self.client)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        try:
            self._write(op_type="create")
            return self
        except ConflictError:
            pass
        try:
            held = self.client.get(index=LOCK_INDEX, id=self.alias)
        except NotFoundError:  # released between the two calls: one more try
            self._write(op_type="create")
            return self
        lock = held["_source"]
        if float(lock.get("expires_at", 0)) > time.time():
            raise LockHeld(_held_message(self.alias, lock))
        try:  # expired: taken over by whoever writes first over this very version
            self._write(if_seq_no=held["_seq_no"], if_primary_term=held["_primary_term"])
        except ConflictError:
            raise LockHeld(f"another push of {self.alias} took over its expired lock") from None
        return self

    def renew(self) -> None:
        """Push the expiry on (at most every third of it); a lost lock stops the push."""
        if time.monotonic() - self.renewed < self.seconds / 3:
            return
        with self.guard:  # several sending threads: one renewal
            if time.monotonic() - self.renewed < self.seconds / 3:
                return
            try:
                self._write(if_seq_no=self.seq_no, if_primary_term=self.primary_term)
            except (ConflictError, NotFoundError):
                raise LockHeld(
                    f"the push lock of {self.alias} expired and was taken by another push"
                ) from None

    def release(self) -> None:
        """Delete the lock if it is still ours (a lock taken over is left to its new holder)."""
        with contextlib.suppress(ConflictError, NotFoundError):
            self.client.delete(
                index=LOCK_INDEX,
                id=self.alias,
                params={"if_seq_no": self.seq_no, "if_primary_term": self.primary_term},
                refresh="true",
            )

    def _write(self, **params: Any) -> None:
        now = time.time()
        reply = self.client.index(
            index=LOCK_INDEX,
            id=self.alias,
            body={"owner": self.owner, "acquired_at": now, "expires_at": now + self.seconds},
            params={**{k: str(v) for k, v in params.items()}, "refresh": "true"},
        )
        self.seq_no = int(reply["_seq_no"])
        self.primary_term = int(reply["_primary_term"])
        self.renewed = time.monotonic()


def _ensure_index(client: OpenSearch) -> None:
    if client.indices.exists(index=LOCK_INDEX):
        return
    try:
        client.indices.create(
            index=LOCK_INDEX,
            body={
                "settings": {"number_of_shards": 1, "auto_expand_replicas": "0-1"},
                "mappings": _MAPPING,
            },
        )
    except RequestError as exc:  # another pusher created it first
        if "resource_already_exists" not in str(exc.error):
            raise
    client.cluster.health(
        index=LOCK_INDEX,
        params={"wait_for_status": "yellow", "timeout": "60s"},
        request_timeout=70,
    )


def _held_message(alias: str, lock: dict[str, Any]) -> str:
    left = max(0.0, float(lock.get("expires_at", 0)) - time.time())
    return (
        f"another push of {alias} is under way ({lock.get('owner', '?')}); "
        f"its lock expires in {left:.0f}s unless renewed"
    )
