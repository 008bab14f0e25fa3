"""What a crawl did, counted as it goes and said in one sentence at the end.

A crawl that lost pages to a 403 or a timeout, or that a bound cut short, reports itself
``partial`` with the counts; one that fetched nothing is ``failed`` (the last copy keeps
serving). Only a crawl where every page in scope answered is ``complete``.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scriptorium.plugin import CrawlReport

COMPLETE, PARTIAL, FAILED = "complete", "partial", "failed"
CRAWLING = "crawling"  # a refresh under way (the last copy serves meanwhile)
# Reasons a link is not followed.
ROBOTS, OUT_OF_SCOPE, EXCLUDED, NOT_HTML, OVER_BOUND = (
    "robots",
    "out of scope",
    "excluded",
    "not HTML",
    "over the bound",
)
LISTED_FAILURES = 20


@dataclass(slots=True)
class CrawlTally:
    """Counts of one crawl; a refresh counts in its thread while ListSources reads."""

    url: str
    fetched: int = 0
    unchanged: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[str, int, str]] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    def skip(self, reason: str) -> None:
        with self.lock:
            self.skipped[reason] += 1

    def fail(self, url: str, status: int, error: str) -> None:
        with self.lock:
            self.failures.append((url, status, error))

    def got(self, unchanged: bool) -> None:
        with self.lock:
            if unchanged:
                self.unchanged += 1
            else:
                self.fetched += 1

    @property
    def state(self) -> str:
        if not self.fetched and not self.unchanged:
            return FAILED
        if self.failures or self.skipped[OVER_BOUND]:
            return PARTIAL
        return COMPLETE

    def detail(self) -> str:
        """``partial: 9 pages fetched, 2 failed (HTTP 403 ×1, timed out ×1), ...``."""
        with self.lock:
            return self._detail()

    def _detail(self) -> str:
        parts = [f"{self.fetched} pages fetched"]
        if self.unchanged:
            parts.append(f"{self.unchanged} unchanged (304)")
        if self.failures:
            errors = Counter(error for _url, _status, error in self.failures)
            listed = ", ".join(f"{error} ×{n}" for error, n in errors.most_common())
            parts.append(f"{len(self.failures)} failed ({listed})")
        if self.skipped:
            listed = ", ".join(f"{n} {reason}" for reason, n in self.skipped.most_common())
            parts.append(f"{sum(self.skipped.values())} skipped ({listed})")
        return f"{self.state}: " + ", ".join(parts)

    def as_json(self) -> dict[str, Any]:
        with self.lock:
            return self._as_json()

    def _as_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "detail": self.detail(),
            "url": self.url,
            "fetched": self.fetched,
            "unchanged": self.unchanged,
            "failed": len(self.failures),
            "skipped": dict(self.skipped),
            "failures": self.failures[:LISTED_FAILURES],
            "finished_at": datetime.now(UTC).isoformat(),
        }


def report_from_json(data: dict[str, Any]) -> CrawlReport | None:
    """The report a stamp file holds (None when there is none or it is unreadable)."""
    try:
        finished = data.get("finished_at")
        return CrawlReport(
            state=str(data["state"]),
            detail=str(data["detail"]),
            url=str(data.get("url", "")),
            pages_fetched=int(data.get("fetched", 0)),
            pages_unchanged=int(data.get("unchanged", 0)),
            pages_failed=int(data.get("failed", 0)),
            skipped={str(k): int(v) for k, v in dict(data.get("skipped", {})).items()},
            failures=[(str(u), int(s), str(e)) for u, s, e in data.get("failures", [])],
            finished_at=datetime.fromisoformat(finished) if finished else None,
        )
    except (KeyError, TypeError, ValueError):
        return None
