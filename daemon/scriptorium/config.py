"""Daemon settings: a TOML file, bare paths from the command line, or both.

Everything the server needs to start is resolved here, once, so the rest of the daemon never
reads the environment or guesses at relative paths. Errors are ``ConfigError`` with a message
that names the offending key or source.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scriptorium.model import SourceClass
from scriptorium.sources import SourceConfig

DEFAULT_LISTEN = "127.0.0.1:50051"
# Kinds that read a directory tree and therefore cannot work without a root.
LOCAL_KINDS = frozenset({"markdown", "code"})
_SOURCE_KEYS = frozenset({"name", "kind", "root", "class", "default", "url_base", "options"})
_LOG_LEVELS = frozenset({"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"})
TELEMETRY_EXPORTERS = ("none", "console", "otlp-grpc", "otlp-http")


class ConfigError(ValueError):
    """The configuration cannot be used; the message says why and where."""


def default_state_dir(sources: Sequence[SourceConfig]) -> Path:
    """A per-configuration cache directory, so two daemons over different trees never collide."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    keys = sorted(
        f"{s.name}\0{Path(s.root).resolve() if s.root is not None else s.url_base}" for s in sources
    )
    digest = hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()[:12]
    return Path(base) / "scriptorium" / digest


@dataclass
class TelemetrySettings:
    """The [telemetry] table: where traces and metrics go. Nowhere by default.

    No collector is ever required: with ``none`` nothing is exported and the tracer is a no-op;
    an unreachable OTLP endpoint costs failed export attempts in the background, never a call.
    """

    exporter: str = "none"  # traces: none, console, otlp-grpc or otlp-http
    metrics_exporter: str = "none"  # metrics: same choices
    # OTLP endpoint shared by both signals; "" means the exporter's default (localhost). Use an
    # http:// URL for a plaintext gRPC collector; for otlp-http the per-signal path is added.
    endpoint: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    service_name: str = "scriptorium"
    sample_ratio: float = 1.0
    metrics_interval_seconds: float = 60.0
    export_timeout_seconds: float = 5.0

    @property
    def tracing(self) -> bool:
        return self.exporter != "none"

    @property
    def metrics(self) -> bool:
        return self.metrics_exporter != "none"


WATCH_MODES = ("events", "poll")


@dataclass
class Settings:
    """Everything the daemon needs to start."""

    listen: str = DEFAULT_LISTEN
    # None means "derive from the sources" (see ``default_state_dir``); filled in on creation.
    state_dir: Path | None = None
    grace_seconds: float = 10.0
    max_concurrent_rpcs: int = 64
    max_receive_message_bytes: int = 4 * 1024 * 1024
    watch: bool = True
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
    # Other top-level tables, kept for the components that own them.
    extra: dict[str, Any] = field(default_factory=dict)

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
) -> Settings:
    """Settings from an optional TOML file plus bare paths; CLI flags override the file."""
    data: dict[str, Any] = {}
    config_dir = Path.cwd()
    if config_path is not None:
        config_path = Path(config_path)
        data = _read_toml(config_path)
        config_dir = config_path.resolve().parent

    server = _parse_server(data.get("server", {}), config_dir)
    sources = _parse_sources(data.get("sources", []), config_dir)
    bare = list(paths)
    if config_path is None and not bare:
        bare = ["."]
    if config_path is not None and not sources and not bare:
        raise ConfigError(f"{config_path}: no [[sources]] configured and no paths given")
    sources.extend(_sources_from_paths(bare, taken={s.name.casefold() for s in sources}))
    _check_unique_names(sources)
    _assign_defaults(sources)

    if listen is not None:
        server["listen"] = listen
        server["listen_explicit"] = True
    if state_dir is not None:
        server["state_dir"] = Path(state_dir).expanduser().resolve()
    ranking = data.get("ranking", {})
    if not isinstance(ranking, Mapping):
        raise ConfigError("[ranking] must be a table")
    telemetry = parse_telemetry(data.get("telemetry", {}))
    extra = {
        k: v for k, v in data.items() if k not in ("server", "sources", "ranking", "telemetry")
    }
    return Settings(
        **server,
        sources=sources,
        config_dir=config_dir,
        ranking=dict(ranking),
        telemetry=telemetry,
        extra=extra,
    )


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


def _resolve(value: Any, base: Path, key: str) -> Path:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{key} must be a non-empty path string")
    path = Path(value).expanduser()
    return (path if path.is_absolute() else base / path).resolve()


# -- [server] ------------------------------------------------------------------------------------


def _number(value: Any, key: str, *, integer: bool, minimum: float, strict: bool) -> Any:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise ConfigError(f"[server] {key} must be {'an integer' if integer else 'a number'}")
    if value < minimum or (strict and value == minimum):
        bound = "greater than" if strict else "at least"
        raise ConfigError(f"[server] {key} must be {bound} {minimum}")
    return value if integer else float(value)


def _parse_server(table: Any, base: Path) -> dict[str, Any]:
    if not isinstance(table, Mapping):
        raise ConfigError("[server] must be a table")
    known = {
        "listen",
        "state_dir",
        "grace_seconds",
        "max_concurrent_rpcs",
        "max_receive_message_bytes",
        "watch",
        "watch_mode",
        "watch_interval",
        "rescan_interval",
        "build_workers",
        "provider_chain",
        "log_level",
        "auth_token",
        "auth_token_env",
        "tls_cert",
        "tls_key",
        "tls_client_ca",
    }
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(
            f"unknown key(s) in [server]: {', '.join(unknown)};"
            f" known keys: {', '.join(sorted(known))}"
        )
    out: dict[str, Any] = {}
    if "listen" in table:
        if not isinstance(table["listen"], str) or not table["listen"].strip():
            raise ConfigError("[server] listen must be a non-empty 'host:port' string")
        out["listen"] = table["listen"].strip()
        out["listen_explicit"] = True
    if "state_dir" in table:
        out["state_dir"] = _resolve(table["state_dir"], base, "[server] state_dir")
    if "grace_seconds" in table:
        out["grace_seconds"] = _number(
            table["grace_seconds"], "grace_seconds", integer=False, minimum=0, strict=False
        )
    if "max_concurrent_rpcs" in table:
        out["max_concurrent_rpcs"] = _number(
            table["max_concurrent_rpcs"],
            "max_concurrent_rpcs",
            integer=True,
            minimum=1,
            strict=False,
        )
    if "max_receive_message_bytes" in table:
        out["max_receive_message_bytes"] = _number(
            table["max_receive_message_bytes"],
            "max_receive_message_bytes",
            integer=True,
            minimum=1024,
            strict=False,
        )
    if "watch" in table:
        if not isinstance(table["watch"], bool):
            raise ConfigError("[server] watch must be true or false")
        out["watch"] = table["watch"]
    if "provider_chain" in table:
        if table["provider_chain"] not in ("first", "fuse"):
            raise ConfigError('[server] provider_chain must be "first" or "fuse"')
        out["provider_chain"] = table["provider_chain"]
    if "watch_interval" in table:
        out["watch_interval"] = _number(
            table["watch_interval"], "watch_interval", integer=False, minimum=0, strict=True
        )
    if "watch_mode" in table:
        if table["watch_mode"] not in WATCH_MODES:
            raise ConfigError('[server] watch_mode must be "events" or "poll"')
        out["watch_mode"] = table["watch_mode"]
    if "rescan_interval" in table:
        out["rescan_interval"] = _number(
            table["rescan_interval"], "rescan_interval", integer=False, minimum=0, strict=False
        )
    if "build_workers" in table:
        out["build_workers"] = _number(
            table["build_workers"], "build_workers", integer=True, minimum=0, strict=False
        )
    if "log_level" in table:
        level = str(table["log_level"]).upper()
        if level not in _LOG_LEVELS:
            raise ConfigError(f"[server] log_level must be one of {', '.join(sorted(_LOG_LEVELS))}")
        out["log_level"] = level
    out["auth_token"] = _auth_token(table)
    for key in ("tls_cert", "tls_key", "tls_client_ca"):
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
        token = table["auth_token"]
        if not isinstance(token, str) or not token:
            raise ConfigError("[server] auth_token must be a non-empty string")
        return token
    if "auth_token_env" in table:
        var = table["auth_token_env"]
        if not isinstance(var, str) or not var:
            raise ConfigError("[server] auth_token_env must name an environment variable")
        token = os.environ.get(var)
        if not token:
            raise ConfigError(f"[server] auth_token_env names {var}, which is not set or empty")
        return token
    return None


# -- [telemetry] ---------------------------------------------------------------------------------


def parse_telemetry(table: Any) -> TelemetrySettings:
    """The [telemetry] table, validated; an empty table leaves telemetry off."""
    if not isinstance(table, Mapping):
        raise ConfigError("[telemetry] must be a table")
    known = set(TelemetrySettings.__dataclass_fields__)
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(
            f"unknown key(s) in [telemetry]: {', '.join(unknown)};"
            f" known keys: {', '.join(sorted(known))}"
        )
    out: dict[str, Any] = {}
    for key in ("exporter", "metrics_exporter"):
        if key in table:
            value = table[key]
            if not isinstance(value, str) or value.strip().lower() not in TELEMETRY_EXPORTERS:
                raise ConfigError(
                    f"[telemetry] {key} must be one of {', '.join(TELEMETRY_EXPORTERS)}"
                )
            out[key] = value.strip().lower()
    for key in ("endpoint", "service_name"):
        if key in table:
            if not isinstance(table[key], str):
                raise ConfigError(f"[telemetry] {key} must be a string")
            out[key] = table[key].strip()
    if out.get("service_name") == "":
        raise ConfigError("[telemetry] service_name must not be empty")
    if "headers" in table:
        headers = table["headers"]
        if not isinstance(headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            raise ConfigError("[telemetry] headers must be a table of strings")
        out["headers"] = dict(headers)
    if "sample_ratio" in table:
        ratio = table["sample_ratio"]
        if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 <= ratio <= 1:
            raise ConfigError("[telemetry] sample_ratio must be a number from 0 to 1")
        out["sample_ratio"] = float(ratio)
    for key in ("metrics_interval_seconds", "export_timeout_seconds"):
        if key in table:
            value = table[key]
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"[telemetry] {key} must be a number greater than 0")
            out[key] = float(value)
    return TelemetrySettings(**out)


# -- [[sources]] ---------------------------------------------------------------------------------


def _parse_sources(items: Any, base: Path) -> list[SourceConfig]:
    if not isinstance(items, list):
        raise ConfigError("sources must be an array of tables ([[sources]])")
    return [_parse_source(item, index, base) for index, item in enumerate(items, start=1)]


def _parse_source(item: Any, index: int, base: Path) -> SourceConfig:
    where = f"[[sources]] #{index}"
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where} must be a table")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: name is required")
    name = name.strip()
    where = f"source {name!r}"
    _check_name(name, where)
    kind = item.get("kind")
    if not isinstance(kind, str) or not kind.strip():
        raise ConfigError(f"{where}: kind is required")
    kind = kind.strip()
    root = _resolve(item["root"], base, f"{where}: root") if "root" in item else None
    if root is None and kind in LOCAL_KINDS:
        raise ConfigError(f"{where}: kind {kind!r} needs a root directory")
    source_class = str(item.get("class", SourceClass.PRODUCT.value)).lower()
    if source_class not in {c.value for c in SourceClass}:
        known = ", ".join(c.value for c in SourceClass)
        raise ConfigError(f"{where}: class must be one of {known}, not {item.get('class')!r}")
    default = item.get("default", False)
    if not isinstance(default, bool):
        raise ConfigError(f"{where}: default must be true or false")
    url_base = item.get("url_base", "")
    if not isinstance(url_base, str):
        raise ConfigError(f"{where}: url_base must be a string")
    nested = item.get("options", {})
    if not isinstance(nested, Mapping):
        raise ConfigError(f"{where}: options must be a table")
    options = {k: v for k, v in item.items() if k not in _SOURCE_KEYS}
    options.update(nested)
    return SourceConfig(
        name=name,
        kind=kind,
        root=root,
        source_class=source_class,
        default=default,
        url_base=url_base,
        options=options,
    )


def _check_name(name: str, where: str) -> None:
    # Names qualify locations ("site/path#anchor"), so they must not contain either separator.
    if "/" in name or "#" in name:
        raise ConfigError(f"{where}: a source name must not contain '/' or '#'")


def _sources_from_paths(paths: Sequence[str], taken: set[str]) -> list[SourceConfig]:
    """Two sources (docs and code) per bare path, named so that every name stays unique."""
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
