"""Default state directories: what each one serves, and which are safe to remove.

Without ``--state-dir`` every configuration gets its own directory under
``$XDG_CACHE_HOME/scriptorium/<hash>`` (see ``config.default_state_dir``), and nothing would
ever remove one. So every process that opens a state directory (``serve``, ``index build``)
records in it what it serves (``state.json``: the configuration file, the sources and their
roots, when it was last opened) and holds a shared advisory lock on ``in-use.lock`` for as long
as it runs. ``scriptorium state list`` reads those; ``scriptorium state prune`` removes only a
directory whose in-use lock and generation writer lock it can take exclusively, and holds both
while it removes it, so a directory a daemon or a build holds is never touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

try:  # POSIX advisory locks; elsewhere a directory never looks in use
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]

from scriptorium.index.generation import WRITER_LOCK
from scriptorium.index.locks import exclusive_lock

if TYPE_CHECKING:
    from scriptorium.settings.config import Settings


RECORD = "state.json"
IN_USE_LOCK = "in-use.lock"
_GENERATIONS = "generations"
_GENERATION_PREFIX = "gen-"


def cache_root() -> Path:
    """Where default state directories live (the parent of every ``<hash>``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "scriptorium"


# -- held by a running process -------------------------------------------------------------------


def claim(state_dir: Path, settings: Settings) -> IO[bytes] | None:
    """Mark ``state_dir`` in use by this process and record what it serves.

    Returns the open lock file: the claim lasts while it stays open (the process's lifetime,
    as the engine keeps it). None where the directory cannot be written (read-only): nothing
    can be pruned there either.
    """
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        handle = _shared_lock(state_dir / IN_USE_LOCK)
        _write_record(state_dir, settings)
    except OSError:
        return None
    return handle


def _shared_lock(path: Path) -> IO[bytes]:
    """A shared lock on ``path``, retried when a prune removed the file while we waited."""
    while True:
        handle = open(path, "a+b")  # noqa: SIM115 - held by the caller
        if fcntl is None:
            return handle
        fcntl.flock(handle, fcntl.LOCK_SH)
        try:
            if os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino:
                return handle
        except FileNotFoundError:
            pass
        handle.close()
        path.parent.mkdir(parents=True, exist_ok=True)


def _write_record(state_dir: Path, settings: Settings) -> None:
    config_path = settings.config_path
    record = {
        "version": 1,
        "config": str(config_path) if config_path else None,
        "sources": [
            {
                "name": s.name,
                "kind": s.kind,
                "root": str(s.root) if s.root is not None else None,
                "url_base": s.url_base or None,
            }
            for s in settings.sources
        ],
        "last_used": time.time(),
        "pid": os.getpid(),
    }
    temp = state_dir / f".{RECORD}.{os.getpid()}.tmp"
    temp.write_text(json.dumps(record, indent=2) + "\n", "utf-8")
    os.replace(temp, state_dir / RECORD)


# -- listing -------------------------------------------------------------------------------------


@dataclass
class StateDir:
    """One state directory as ``state list`` shows it."""

    path: str
    config: str | None
    roots: list[str] = field(default_factory=list)
    size_bytes: int = 0
    generations: int = 0
    last_used: float = 0.0
    in_use: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _read_record(state_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((state_dir / RECORD).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _is_state_dir(path: Path) -> bool:
    return any((path / name).exists() for name in (RECORD, _GENERATIONS, WRITER_LOCK))


def _size(path: Path) -> int:
    """Bytes on disk under ``path``, each hard-linked file once (generations share files)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for directory, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                stat = os.lstat(os.path.join(directory, name))
                if (stat.st_dev, stat.st_ino) not in seen:
                    seen.add((stat.st_dev, stat.st_ino))
                    total += stat.st_size
    return total


def _generations(state_dir: Path) -> list[Path]:
    try:
        entries = list((state_dir / _GENERATIONS).iterdir())
    except OSError:
        return []
    return [e for e in entries if e.name.startswith(_GENERATION_PREFIX) and e.is_dir()]


def _last_used(state_dir: Path, record: dict[str, Any], generations: list[Path]) -> float:
    """When a process last opened the directory or wrote a generation into it."""
    moments = [float(record.get("last_used") or 0.0)]
    for gen in generations:
        with contextlib.suppress(OSError):
            moments.append(gen.stat().st_mtime)
    if moments == [0.0]:
        with contextlib.suppress(OSError):
            moments.append(state_dir.stat().st_mtime)
    return max(moments)


def _exclusive(path: Path) -> contextlib.AbstractContextManager[bool]:
    """Try to take ``path``'s lock exclusively at once; yields whether it was taken."""
    return exclusive_lock(path, wait=False)


@contextlib.contextmanager
def _unused(state_dir: Path) -> Iterator[bool]:
    """Hold both locks of a directory no process uses; yields False when one is held."""
    with _exclusive(state_dir / IN_USE_LOCK) as free, _exclusive(state_dir / WRITER_LOCK) as idle:
        yield free and idle


def in_use(state_dir: Path) -> bool:
    with _unused(state_dir) as unused:
        return not unused


def describe(state_dir: Path) -> StateDir:
    record = _read_record(state_dir)
    generations = _generations(state_dir)
    sources = record.get("sources") if isinstance(record.get("sources"), list) else []
    roots = sorted(
        {str(s.get("root") or s.get("url_base")) for s in sources if isinstance(s, dict)} - {"None"}
    )
    return StateDir(
        path=str(state_dir),
        config=record.get("config") if isinstance(record.get("config"), str) else None,
        roots=roots,
        size_bytes=_size(state_dir),
        generations=len(generations),
        last_used=_last_used(state_dir, record, generations),
        in_use=in_use(state_dir),
    )


def list_state_dirs(root: Path | None = None) -> list[StateDir]:
    """Every state directory under the default location, most recently used first."""
    root = root or cache_root()
    try:
        entries = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    found = [describe(p) for p in entries if _is_state_dir(p)]
    return sorted(found, key=lambda d: d.last_used, reverse=True)


# -- pruning -------------------------------------------------------------------------------------


@dataclass
class PruneResult:
    removed: list[StateDir] = field(default_factory=list)
    kept_in_use: list[StateDir] = field(default_factory=list)
    kept_recent: list[StateDir] = field(default_factory=list)


def prune(
    older_than_days: float, *, dry_run: bool = False, root: Path | None = None
) -> PruneResult:
    """Remove the directories unused for ``older_than_days`` that no process holds now."""
    cutoff = time.time() - older_than_days * 86400
    result = PruneResult()
    for entry in list_state_dirs(root):
        if entry.in_use:
            result.kept_in_use.append(entry)
        elif entry.last_used > cutoff:
            result.kept_recent.append(entry)
        elif dry_run or _remove_unless_claimed(Path(entry.path)):
            result.removed.append(entry)
        else:
            result.kept_in_use.append(entry)
    return result


def _remove_unless_claimed(state_dir: Path) -> bool:
    """Remove ``state_dir`` while holding both of its locks; False when a process holds one."""
    with _unused(state_dir) as unused:
        if not unused:
            return False
        shutil.rmtree(state_dir, ignore_errors=True)
        return True
