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

from scriptorium.domain.model import SourceClass
from scriptorium.settings.dependencies import dependency_options, dependency_source
from scriptorium.settings.listen import allowed_hosts as _allowed_hosts
from scriptorium.settings.listen import http_listen as _http_listen
from scriptorium.settings.schema import (
    ConfigError,
    Key,
    check_table,
    check_value,
    describe,
    table_of,
    unknown_key_message,
)
from scriptorium.settings.sourceconfig import SourceConfig
from scriptorium.settings.telemetry import (
    TelemetrySettings,
    parse_telemetry,
)

DEFAULT_LISTEN = "127.0.0.1:50051"
# Kinds that read a directory tree and therefore cannot work without a root.
LOCAL_KINDS = frozenset({"markdown", "code", "dependencies"})
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
    # Worker processes for builds with many changed files: 0 = one per core (at most 4),
    # 1 = build in the daemon's own process.
    build_workers: int = 0
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
    sources = _parse_sources(data.get("sources", []), config_dir)
    bare = list(paths)
    if config_path is None and not bare:
        bare = ["."]
    if config_path is not None and not sources and not bare:
        raise ConfigError(f"{config_path}: no [[sources]] configured and no paths given")
    offered = dependency_options(data.get("dependencies", {}), dependencies)
    sources.extend(
        _sources_from_paths(bare, taken={s.name.casefold() for s in sources}, dependencies=offered)
    )
    _check_unique_names(sources)
    _assign_defaults(sources)

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
        from scriptorium.ranking.settings import RANKING_KEYS

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


def _resolve(value: Any, base: Path, key: str) -> Path:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{key} must be a non-empty path string")
    path = Path(value).expanduser()
    return (path if path.is_absolute() else base / path).resolve()


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
            out[key] = _resolve(table[key], base, f"[server] {key}")
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


SOURCE_KEYS: tuple[Key, ...] = (
    Key("name", "string", None, "the source's name; non-default sources qualify locations"),
    Key("kind", "string", None, "which plugin reads it: markdown, code, mkdocs, peer, ..."),
    Key("root", "string", None, "the directory a local kind reads"),
    Key("class", "string", "product", "product, reference, ledger or archive"),
    Key("default", "bool", False, "whether bare locations are looked up here"),
    Key("url_base", "string", "", "base URL of the published pages"),
    Key("options", "table", {}, "kind-specific keys, as an alternative to writing them inline"),
)
_COMMON_SOURCE_KEYS = frozenset(k.name for k in SOURCE_KEYS)


def _parse_sources(items: Any, base: Path) -> list[SourceConfig]:
    if not isinstance(items, list):
        raise ConfigError(
            f"sources must be an array of tables ([[sources]]), got {describe(items)}"
        )
    return [_parse_source(item, index, base) for index, item in enumerate(items, start=1)]


def source_label(index: int, name: str | None) -> str:
    """How an unknown-key error names a source: ``[[sources]] #2 ("code")``."""
    return f'[[sources]] #{index} ("{name}")' if name else f"[[sources]] #{index}"


def _parse_source(item: Any, index: int, base: Path) -> SourceConfig:
    item = table_of(item, f"[[sources]] #{index}")
    raw_name = item.get("name")
    if not isinstance(raw_name, str) or not raw_name.strip():
        got = "" if raw_name is None else f", got {describe(raw_name)}"
        raise ConfigError(f"[[sources]] #{index}: name is required (a non-empty string){got}")
    name = raw_name.strip()
    where = f'[[sources]] "{name}":'
    common = {k: v for k, v in item.items() if k in _COMMON_SOURCE_KEYS}
    check_table(common, SOURCE_KEYS, source_label(index, name), where)
    _check_name(name, where)
    kind = item.get("kind", "").strip()
    if not kind:
        raise ConfigError(f"{where} kind is required")
    root = _resolve(item["root"], base, f"{where} root") if "root" in item else None
    if root is None and kind in LOCAL_KINDS:
        raise ConfigError(f"{where} kind {kind!r} needs a root directory")
    source_class = item.get("class", SourceClass.PRODUCT.value).lower()
    if source_class not in {c.value for c in SourceClass}:
        known = ", ".join(c.value for c in SourceClass)
        raise ConfigError(f"{where} class must be one of {known}, not {item.get('class')!r}")
    options = {k: v for k, v in item.items() if k not in _COMMON_SOURCE_KEYS}
    for key, value in item.get("options", {}).items():
        if key in options:
            raise ConfigError(f"{where} {key} is given both inline and in [sources.options]")
        options[key] = value
    return SourceConfig(
        name=name,
        kind=kind,
        root=root,
        source_class=source_class,
        default=item.get("default", False),
        url_base=item.get("url_base", ""),
        options=options,
        index=index,
    )


def check_source_options(sources: Sequence[SourceConfig], declared: Mapping[str, Any]) -> None:
    """Each source's kind-specific keys against what the plugin owning its kind declares.

    ``declared`` maps a kind to its keys (a sequence of :class:`Key`), or to None for a plugin
    that declares none: its sources' keys are then passed through unchecked.
    """
    for source in sources:
        keys = declared.get(source.kind)
        if keys is None or not source.options:
            continue
        label = source_label(source.index, source.name) if source.index else repr(source.name)
        common = [k.name for k in SOURCE_KEYS]
        declared_names = {k.name for k in keys}
        for key in source.options:
            if key not in declared_names:
                hint_pool = declared_names | set(common)
                raise ConfigError(
                    unknown_key_message(str(key), label, hint_pool)
                    + ("" if keys else f" (kind {source.kind!r} takes no other keys)")
                )
        for key in keys:
            if key.name in source.options:
                check_value(key, source.options[key.name], f'[[sources]] "{source.name}":')


def _check_name(name: str, where: str) -> None:
    # Names qualify locations ("site/path#anchor"), so they must not contain either separator.
    if "/" in name or "#" in name:
        raise ConfigError(f"{where} a source name must not contain '/' or '#'")


def _sources_from_paths(
    paths: Sequence[str], taken: set[str], dependencies: dict[str, Any] | None = None
) -> list[SourceConfig]:
    """Two sources (docs and code) per bare path, named so that every name stays unique, and
    a third (``deps``, the installed dependencies) where the path holds a manifest and
    ``dependencies`` (its options) is given."""
    out: list[SourceConfig] = []
    roots: set[Path] = set()
    for raw in paths:
        root = Path(raw).expanduser().resolve()
        if not root.is_dir():
            raise ConfigError(f"not a directory: {raw}")
        if root in roots:
            continue
        roots.add(root)
        if len(paths) == 1 and not ({"docs", "code"} & taken):
            stem = ""
        else:
            stem = _unique_stem(root.name or "root", taken)
        for kind, suffix in (("markdown", "docs"), ("code", "code")):
            name = f"{stem}-{suffix}" if stem else suffix
            taken.add(name.casefold())
            out.append(SourceConfig(name=name, kind=kind, root=root, default=True))
        if dependencies is not None:
            out.extend(
                dependency_source(root, f"{stem}-deps" if stem else "deps", taken, dependencies)
            )
    return out


def _unique_stem(dirname: str, taken: set[str]) -> str:
    stem = dirname.replace("/", "-").replace("#", "-")
    candidate, n = stem, 1
    while f"{candidate}-docs".casefold() in taken or f"{candidate}-code".casefold() in taken:
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def _check_unique_names(sources: Sequence[SourceConfig]) -> None:
    seen: dict[str, str] = {}
    for source in sources:
        key = source.name.casefold()
        if key in seen:
            raise ConfigError(
                f"duplicate source name {source.name!r} (names are compared case-insensitively;"
                f" {seen[key]!r} is already configured)"
            )
        seen[key] = source.name


def _assign_defaults(sources: Sequence[SourceConfig]) -> None:
    """Without an explicit default, the first docs and the first code source become defaults."""
    if any(s.default for s in sources):
        return
    for kind in ("markdown", "code"):
        first = next((s for s in sources if s.kind == kind), None)
        if first is not None:
            first.default = True
