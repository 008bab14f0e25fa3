"""Daemon settings: a TOML file, bare paths from the command line, or both.

Everything the server needs to start is resolved here, once, so the rest of the daemon never
reads the environment or guesses at relative paths. Errors are ``ConfigError`` with a message
that names the offending key or source.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scriptorium.settings.dependencies import dependency_options
from scriptorium.settings.listen import allowed_hosts as _allowed_hosts
from scriptorium.settings.listen import http_listen as _http_listen
from scriptorium.settings.schema import (
    ConfigError,
    Key,
    check_table,
    table_of,
)
from scriptorium.settings.source_tables import (
    assign_defaults,
    check_unique_names,
    parse_sources,
    resolve_path,
    sources_from_paths,
)
from scriptorium.settings.sourceconfig import SourceConfig
from scriptorium.settings.telemetry import (
    TelemetrySettings,
    parse_telemetry,
)

DEFAULT_LISTEN = "127.0.0.1:50051"
# Kinds that read a directory tree and therefore cannot work without a root.
_LOG_LEVELS = frozenset({"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"})
# The top-level tables a configuration file may hold.
TABLES = ("server", "sources", "ranking", "telemetry", "dependencies")


def default_state_dir(sources: Sequence[SourceConfig]) -> Path:
    """A per-configuration cache directory, so two daemons over different trees never collide."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    keys = sorted(
        f"{s.name}\0{Path(s.root).resolve() if s.root is not None else s.url_base}" for s in sources
    )
    digest = hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()[:12]
    return Path(base) / "scriptorium" / digest


WATCH_MODES = ("events", "poll")
# A build's default memory bound (megabytes; see ``build_memory_mb``).
BUILD_MEMORY_MB = 400


@dataclass
class Settings:
    """Everything the daemon needs to start."""

    listen: str = DEFAULT_LISTEN
    # The HTTP/JSON API and web console (scriptorium.http); None: off, and never imported.
    http_listen: str | None = None
    # None means "derive from the sources" (see ``default_state_dir``); filled in on creation.
    state_dir: Path | None = None
    grace_seconds: float = 10.0
    max_concurrent_rpcs: int = 64
    max_receive_message_bytes: int = 4 * 1024 * 1024
    # A larger response is RESOURCE_EXHAUSTED: what one stream can hold while its client does
    # not read (a GetContent of a whole 2 MB file is about 3 MB on the wire).
    max_send_message_bytes: int = 16 * 1024 * 1024
    # Streams one connection may have open (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS); a client
    # queues the rest. With the above, it bounds what one connection can make the daemon hold.
    max_concurrent_streams: int = 32
    # The HTTP door's guards against slow and numerous clients, and the Host names it answers.
    http_header_timeout_seconds: float = 10.0
    http_body_timeout_seconds: float = 30.0
    http_max_connections: int = 256
    http_allowed_hosts: list[str] = field(default_factory=list)
    watch: bool = True
    # A reader: serves the generations in ``state_dir`` as they are and never writes one
    # there (no build, no catch-up, no watch). Implied when the directory cannot be written.
    read_only: bool = False
    # "events": file-system notifications (inotify and its kin), falling back to listing the
    # roots every ``watch_interval`` seconds where the platform has none; "poll": always list.
    watch_mode: str = "events"
    watch_interval: float = 0.5
    # With events, a full listing this often anyway (seconds; 0 = never): it catches what no
    # event reports, such as an edit behind a symlink that points elsewhere in the tree.
    rescan_interval: float = 300.0
    # Processes that load the files of builds with many changed files: 0 = one per core (at
    # most 3), 1 = build in the daemon's own process; with more, helpers load and the daemon
    # writes.
    build_workers: int = 0
    # Megabytes the building process of a large build may hold (0: no bound, tantivy's
    # arena at 1 GB): a quarter goes to tantivy's indexing arena, whose fill writes a
    # segment; documents are held as stored records, text dropped, once written.
    build_memory_mb: int = BUILD_MEMORY_MB
    # The share of the index's blocks deleted by edits the watch landed at which the index is
    # written again from the roots, so BM25's statistics count only what is served
    # (``index/compaction.py``); a reconcile of every root does so at any share.
    rewrite_deleted_share: float = 0.01
    # Bytes of document text (texts, bodies, line tables) in memory; the rest is read on demand.
    text_cache_bytes: int = 64 << 20
    # How providers answer: "first" non-empty provider wins, or "fuse" all their candidates.
    provider_chain: str = "first"
    log_level: str = "INFO"
    auth_token: str | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    sources: list[SourceConfig] = field(default_factory=list)
    config_dir: Path = field(default_factory=Path.cwd)
    # True when ``listen`` came from the config file or the command line: only then may the
    # daemon bind an address other than loopback.
    listen_explicit: bool = False
    # The [ranking] table: ranking levers, validated by the engine that applies them.
    ranking: dict[str, Any] = field(default_factory=dict)
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)
    # The configuration file the settings came from, when there was one.
    config_path: Path | None = None

    def __post_init__(self) -> None:
        if self.state_dir is None:
            self.state_dir = default_state_dir(self.sources)

    @property
    def tls_enabled(self) -> bool:
        return self.tls_cert is not None


# -- loading ------------------------------------------------------------------------------------


def load_settings(
    config_path: Path | None = None,
    paths: Sequence[str] = (),
    *,
    listen: str | None = None,
    state_dir: str | None = None,
    http_listen: str | None = None,
    dependencies: bool | None = None,
) -> Settings:
    """Settings from an optional TOML file plus bare paths; CLI flags override the file.

    ``dependencies`` False (``--no-dependencies``) keeps bare paths from offering their
    dependencies whatever ``[dependencies] enabled`` says.
    """
    data: dict[str, Any] = {}
    config_dir = Path.cwd()
    if config_path is not None:
        config_path = Path(config_path)
        data = _read_toml(config_path)
        config_dir = config_path.resolve().parent
    _check_tables(data)

    server = _parse_server(data.get("server", {}), config_dir)
    sources = parse_sources(data.get("sources", []), config_dir)
    bare = list(paths)
    if config_path is None and not bare:
        bare = ["."]
    if config_path is not None and not sources and not bare:
        raise ConfigError(f"{config_path}: no [[sources]] configured and no paths given")
    offered = dependency_options(data.get("dependencies", {}), dependencies)
    sources.extend(
        sources_from_paths(bare, taken={s.name.casefold() for s in sources}, dependencies=offered)
    )
    check_unique_names(sources)
    assign_defaults(sources)

    if listen is not None:
        server["listen"] = listen
        server["listen_explicit"] = True
    if state_dir is not None:
        server["state_dir"] = Path(state_dir).expanduser().resolve()
    if http_listen is not None:
        server["http_listen"] = _http_listen(http_listen, "--http")
    return Settings(
        **server,
        sources=sources,
        config_dir=config_dir,
        config_path=config_path.resolve() if config_path is not None else None,
        ranking=_parse_ranking(data.get("ranking", {})),
        telemetry=parse_telemetry(data.get("telemetry", {})),
    )


def _check_tables(data: Mapping[str, Any]) -> None:
    """Every top-level key of the file must be one of the tables below."""
    for key in data:
        if key not in TABLES:
            close = difflib.get_close_matches(key, TABLES, n=1)
            hint = f"; did you mean [{close[0]}]?" if close else f"; known: {', '.join(TABLES)}"
            raise ConfigError(f"unknown table [{key}]{hint}")


def _parse_ranking(value: Any) -> dict[str, Any]:
    table = table_of(value, "[ranking]")
    if table:
        from scriptorium.settings.ranking import RANKING_KEYS

        check_table(table, RANKING_KEYS, "[ranking]")
    return dict(table)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None


# -- [server] ------------------------------------------------------------------------------------

SERVER_KEYS: tuple[Key, ...] = (
    Key("listen", "string", DEFAULT_LISTEN, "address to bind (host:port); loopback by default"),
    Key("http_listen", "string", None, "HTTP API and web console (host:port); off unless set"),
    Key("state_dir", "string", None, "index generations (default: ~/.cache/scriptorium/<hash>)"),
    Key("grace_seconds", "number", 10.0, "how long in-flight calls may finish", minimum=0),
    Key("max_concurrent_rpcs", "integer", 64, "calls in flight before refusing", minimum=1),
    Key("max_receive_message_bytes", "integer", 4 * 1024 * 1024, "request size cap", minimum=1024),
    Key("max_send_message_bytes", "integer", 16 * 1024 * 1024, "response size cap", minimum=1024),
    Key("max_concurrent_streams", "integer", 32, "calls in flight per connection", minimum=1),
    Key(
        "http_header_timeout_seconds",
        "number",
        10.0,
        "HTTP: a request's headers must arrive within this, or the connection is closed",
        minimum=0,
        strict=True,
    ),
    Key(
        "http_body_timeout_seconds",
        "number",
        30.0,
        "HTTP: a request's body must arrive within this after its headers",
        minimum=0,
        strict=True,
    ),
    Key("http_max_connections", "integer", 256, "HTTP connections open at once", minimum=1),
    Key("http_allowed_hosts", "strings", [], "HTTP Host names answered beside loopback's"),
    Key("watch", "bool", True, "re-index when files change"),
    Key("read_only", "bool", False, "serve state_dir's generations, never write one there"),
    Key("watch_mode", "string", "events", "file-system events or listing", choices=WATCH_MODES),
    Key("watch_interval", "number", 0.5, "seconds between listings", minimum=0, strict=True),
    Key("rescan_interval", "number", 300.0, "seconds between safety listings", minimum=0),
    Key("build_workers", "integer", 0, "worker processes for large builds", minimum=0),
    Key(
        "build_memory_mb",
        "integer",
        BUILD_MEMORY_MB,
        "megabytes the building process may hold while it writes a large build: a quarter "
        "is tantivy's indexing arena, and a build that fills it writes another segment, "
        "each searched on its own (0: no bound, a 1 GB arena)",
        minimum=0,
    ),
    Key(
        "rewrite_deleted_share",
        "number",
        0.01,
        "share of the index's blocks deleted by watched edits at which it is written again "
        "from the roots, so ranks match a fresh build (0: after every such edit)",
        minimum=0,
    ),
    Key("text_cache_bytes", "integer", 64 << 20, "text kept in memory (bytes)", minimum=0),
    Key("provider_chain", "string", "first", "how providers answer", choices=("first", "fuse")),
    Key("log_level", "string", "INFO", "DEBUG, INFO, WARNING, ERROR or CRITICAL"),
    Key("auth_token", "string", None, "bearer token every call must carry"),
    Key("auth_token_env", "string", None, "environment variable holding auth_token"),
    Key("tls_cert", "string", None, "server certificate (PEM)"),
    Key("tls_key", "string", None, "server key (PEM)"),
    Key("tls_client_ca", "string", None, "CA that client certificates must be signed by"),
)
# Keys taken as they are once their declaration has checked them, and numbers kept as floats.
_PLAIN_KEYS = frozenset(
    {
        "max_concurrent_rpcs",
        "max_receive_message_bytes",
        "max_send_message_bytes",
        "max_concurrent_streams",
        "http_max_connections",
        "watch",
        "read_only",
        "watch_mode",
        "build_workers",
        "build_memory_mb",
        "text_cache_bytes",
        "provider_chain",
    }
)
_FLOAT_KEYS = frozenset(
    {
        "grace_seconds",
        "watch_interval",
        "rewrite_deleted_share",
        "rescan_interval",
        "http_header_timeout_seconds",
        "http_body_timeout_seconds",
    }
)
_PATH_KEYS = ("state_dir", "tls_cert", "tls_key", "tls_client_ca")


def _parse_server(value: Any, base: Path) -> dict[str, Any]:
    table = table_of(value, "[server]")
    check_table(table, SERVER_KEYS, "[server]")
    out: dict[str, Any] = {}
    for key in _PLAIN_KEYS & set(table):
        out[key] = table[key]
    for key in _FLOAT_KEYS & set(table):
        out[key] = float(table[key])
    if "listen" in table:
        if not table["listen"].strip():
            raise ConfigError("[server] listen must be a non-empty 'host:port' string")
        out["listen"] = table["listen"].strip()
        out["listen_explicit"] = True
    if "http_listen" in table:
        out["http_listen"] = _http_listen(table["http_listen"], "[server] http_listen")
    if "http_allowed_hosts" in table:
        where = "[server] http_allowed_hosts"
        out["http_allowed_hosts"] = _allowed_hosts(table["http_allowed_hosts"], where)
    if "log_level" in table:
        level = table["log_level"].upper()
        if level not in _LOG_LEVELS:
            raise ConfigError(f"[server] log_level must be one of {', '.join(sorted(_LOG_LEVELS))}")
        out["log_level"] = level
    out["auth_token"] = _auth_token(table)
    for key in _PATH_KEYS:
        if key in table:
            out[key] = resolve_path(table[key], base, f"[server] {key}")
    if ("tls_cert" in out) != ("tls_key" in out):
        raise ConfigError("[server] tls_cert and tls_key must be given together")
    if "tls_client_ca" in out and "tls_cert" not in out:
        raise ConfigError("[server] tls_client_ca needs tls_cert and tls_key")
    return out


def _auth_token(table: Mapping[str, Any]) -> str | None:
    if "auth_token" in table and "auth_token_env" in table:
        raise ConfigError("[server] give auth_token or auth_token_env, not both")
    if "auth_token" in table:
        if not table["auth_token"]:
            raise ConfigError("[server] auth_token must be a non-empty string")
        return table["auth_token"]
    if "auth_token_env" in table:
        var = table["auth_token_env"]
        if not var:
            raise ConfigError("[server] auth_token_env must name an environment variable")
        token = os.environ.get(var)
        if not token:
            raise ConfigError(f"[server] auth_token_env names {var}, which is not set or empty")
        return token
    return None


# -- [[sources]] ---------------------------------------------------------------------------------
