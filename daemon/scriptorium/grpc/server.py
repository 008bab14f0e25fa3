"""The daemon process: bind, serve, report health, drain on SIGTERM.

Start-up order matters to whoever probes the daemon: the port is bound and answering (health
NOT_SERVING, retrieval calls UNAVAILABLE) while the engine loads its sources; only then does
health turn SERVING and the ready file appear. Shutdown reverses it: NOT_SERVING first, then
in-flight calls drain within the grace period, then the engine stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import os
import socket
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from scriptorium import telemetry
from scriptorium.cancel import EXIT_INTERRUPTED
from scriptorium.engine.base import Engine
from scriptorium.grpc.interceptors import ConcurrencyLimitInterceptor, build_interceptors
from scriptorium.grpc.servicer import RetrievalServicer
from scriptorium.settings.config import ConfigError, Settings
from scriptorium.text.tokenize import implementation as tokenizer_implementation
from scriptorium.v1 import retrieval_pb2, retrieval_pb2_grpc

log = logging.getLogger(__name__)

SERVICE_NAME = retrieval_pb2.DESCRIPTOR.services_by_name["RetrievalService"].full_name
# A health entry, not a service: SERVING only once answers reflect the roots as the daemon
# found them at start-up (its catch-up has landed), for clients that must not get an older
# tree's answers (the engine's ``current``).
CURRENT_NAME = "scriptorium.v1.current"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
# While no source can be served, how often health looks again (a root may appear).
HEALTH_RECHECK_S = 1.0


class BindError(ConfigError):
    """The listen address could not be bound."""


@dataclass
class Shutdown:
    """Set by signal handlers (or tests): ``requested`` drains, ``forced`` skips the grace."""

    requested: asyncio.Event = field(default_factory=asyncio.Event)
    forced: asyncio.Event = field(default_factory=asyncio.Event)
    signal: int | None = None  # the first signal that asked, if one did

    def request(self, sig: int | None = None) -> None:
        if self.requested.is_set():
            self.forced.set()
        elif sig is not None:
            self.signal = int(sig)
        self.requested.set()

    def interrupted_status(self) -> int:
        """The exit status of a daemon stopped before it was ready: 128 + the signal, as a
        shell reports a program a signal ended (130 for Ctrl-C)."""
        return 128 + self.signal if self.signal is not None else EXIT_INTERRUPTED


@dataclass
class RunningServer:
    server: grpc.aio.Server
    health: health.aio.HealthServicer
    port: int
    # Counts retrieval calls in flight (health and reflection are exempt), for the drain.
    limiter: ConcurrencyLimitInterceptor | None = None
    # The one servicer every transport calls (a sidecar such as HTTP answers through it too).
    servicer: RetrievalServicer | None = None
    # The health status last set, for a sidecar that reports it (HTTP /healthz, /readyz).
    status: int = NOT_SERVING
    # And that of CURRENT_NAME (HTTP /readyz?current).
    current_status: int = NOT_SERVING


class Sidecar(Protocol):
    """Another listener in the daemon process (the HTTP API), started beside the gRPC server
    and stopped with it."""

    async def stop(self, grace: float, forced: asyncio.Event) -> None:
        """Refuse new calls, let those in flight finish within ``grace`` (or until
        ``forced``), then close."""


# Builds and starts a sidecar once the gRPC server is bound; a BindError refuses to start.
SidecarFactory = Callable[[Settings, RunningServer], Awaitable[Sidecar]]


# -- checks --------------------------------------------------------------------------------------


def listen_host(listen: str) -> str:
    """The host part of a ``host:port`` listen address (brackets removed for IPv6)."""
    host, sep, _port = listen.rpartition(":")
    if not sep:
        host = listen
    return host.strip("[]")


def is_loopback(listen: str) -> bool:
    if listen.startswith(("unix:", "unix-abstract:")):
        return True
    host = listen_host(listen)
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listen_address(settings: Settings) -> None:
    """Only an explicitly configured address may expose the daemon beyond this machine."""
    if is_loopback(settings.listen):
        return
    if not settings.listen_explicit:
        raise ConfigError(
            f"refusing to listen on non-loopback address {settings.listen!r}; "
            "set [server] listen or pass --listen to expose the daemon"
        )
    if not settings.auth_token and not settings.tls_enabled:
        log.warning(
            "listening on %s without authentication or TLS: anyone who can reach it can read "
            "every indexed source",
            settings.listen,
        )


def check_http_address(settings: Settings) -> None:
    """The HTTP address is always explicit; beyond loopback it carries the same warning."""
    listen = settings.http_listen or ""
    if not is_loopback(listen) and not settings.auth_token and not settings.tls_enabled:
        log.warning(
            "HTTP on %s without authentication or TLS: anyone who can reach it can read "
            "every indexed source",
            listen,
        )
    if not is_loopback(listen) and not settings.http_allowed_hosts:
        log.warning(
            "HTTP on %s answers only the Host names 127.0.0.1, localhost, [::1] and %s: list "
            "the names clients reach it by in [server] http_allowed_hosts",
            listen,
            listen_host(listen),
        )


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}") from None


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """TLS credentials when a certificate is configured; a client CA turns on mutual TLS."""
    if settings.tls_cert is None or settings.tls_key is None:
        return None
    pair = (_read(settings.tls_key, "TLS key"), _read(settings.tls_cert, "TLS certificate"))
    client_ca = settings.tls_client_ca
    return grpc.ssl_server_credentials(
        [pair],
        root_certificates=_read(client_ca, "TLS client CA") if client_ca else None,
        require_client_auth=client_ca is not None,
    )


# -- building ------------------------------------------------------------------------------------


async def start_server(settings: Settings, engine: Engine) -> RunningServer:
    """Build, bind and start the gRPC server; health starts NOT_SERVING."""
    # The tracing interceptor (when on) runs first, so refused calls are traced too.
    ours = build_interceptors(
        max_concurrent_rpcs=settings.max_concurrent_rpcs, auth_token=settings.auth_token
    )
    limiter = next((i for i in ours if isinstance(i, ConcurrencyLimitInterceptor)), None)
    server = grpc.aio.server(
        interceptors=[*telemetry.server_interceptors(), *ours],
        options=[
            ("grpc.max_receive_message_length", settings.max_receive_message_bytes),
            # What a client that never reads can pin: streams per connection, bytes each.
            ("grpc.max_send_message_length", settings.max_send_message_bytes),
            ("grpc.max_concurrent_streams", settings.max_concurrent_streams),
            # Two daemons must not silently share a port.
            ("grpc.so_reuseport", 0),
        ],
    )
    servicer = RetrievalServicer(engine)
    retrieval_pb2_grpc.add_RetrievalServiceServicer_to_server(servicer, server)
    health_servicer = health.aio.HealthServicer()
    await health_servicer.set("", NOT_SERVING)
    await health_servicer.set(SERVICE_NAME, NOT_SERVING)
    await health_servicer.set(CURRENT_NAME, NOT_SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    credentials = server_credentials(settings)
    _check_address_free(settings.listen)
    try:
        if credentials is None:
            port = server.add_insecure_port(settings.listen)
        else:
            port = server.add_secure_port(settings.listen, credentials)
    except RuntimeError as exc:
        raise BindError(f"cannot listen on {settings.listen}: {exc}") from None
    if port == 0 and not settings.listen.startswith(("unix:", "unix-abstract:")):
        raise BindError(f"cannot listen on {settings.listen}")
    await server.start()
    return RunningServer(server, health_servicer, port, limiter, servicer)


def _check_address_free(listen: str) -> None:
    """Refuse an address in use before gRPC tries it: its C core prints its own line on stderr
    (an ``add_port.cc`` trace) before the sentence; this way the sentence is all there is."""
    if listen.startswith(("unix:", "unix-abstract:")):
        return
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"
    if not port.isdigit() or int(port) == 0:
        return
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except OSError:
        return  # gRPC says what is wrong with the name
    for family, kind, proto, _, address in infos[:1]:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise BindError(
                        f"cannot listen on {listen}: the address is already in use (another "
                        "daemon? stop it, or pick another address with --listen)"
                    ) from None
                if exc.errno == errno.EACCES:
                    raise BindError(f"cannot listen on {listen}: permission denied") from None


def _write_ready_file(path: Path, port: int) -> None:
    """Atomically, so a watcher never reads a half-written port."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(f"{port}\n", encoding="utf-8")
    os.replace(tmp, path)


def _log_ready(engine: Engine, seconds: float) -> None:
    reports = engine.list_sources()
    states = Counter(r.state for r in reports)
    log.info(
        "ready in %.2fs: %d sources (%s), %d documents, %d blocks",
        seconds,
        len(reports),
        ", ".join(f"{n} {state}" for state, n in sorted(states.items())) or "none",
        sum(r.document_count for r in reports),
        sum(r.block_count for r in reports),
    )
    for report in reports:
        if report.state == "failed":
            log.warning("source %s failed: %s", report.name, report.last_error)


async def _set_health(running: RunningServer, status: int) -> None:
    running.status = status
    await running.health.set("", status)
    await running.health.set(SERVICE_NAME, status)


async def _follow_health(engine: Engine, running: RunningServer, ready_file: Path | None) -> None:
    """SERVING while some source can be served; NOT_SERVING while none can (every source
    failed: a balancer must not send calls that can only come back empty).

    Said in the log at each change; the ready file is written the first time it is SERVING.
    """
    serving: bool | None = None
    announced = False
    while True:
        await _follow_current(engine, running)
        why = _unserviceable(engine)
        if (why is None) != serving:
            if why is None and serving is False:
                log.info("a source can be served now: health SERVING")
            elif why is not None:
                log.error("no source can be served, health stays NOT_SERVING: %s", why)
            serving = why is None
            await _set_health(running, SERVING if serving else NOT_SERVING)
            if serving and ready_file is not None and not announced:
                _write_ready_file(ready_file, running.port)
                announced = True
        await asyncio.sleep(HEALTH_RECHECK_S)


async def _follow_current(engine: Engine, running: RunningServer) -> None:
    """CURRENT_NAME turns SERVING once the engine is current (and stays so until the drain)."""
    if running.current_status != SERVING and engine.current:
        log.info("answers are current: health %s SERVING", CURRENT_NAME)
        running.current_status = SERVING
        await running.health.set(CURRENT_NAME, SERVING)


def _unserviceable(engine: Engine) -> str | None:
    """``engine.unserviceable()``; an engine that fails to tell is taken as serviceable (a
    bug there must not keep a working daemon out of its balancer)."""
    try:
        return engine.unserviceable()
    except Exception:
        log.exception("cannot tell whether any source can be served; reporting SERVING")
        return None


# -- running -------------------------------------------------------------------------------------


async def run_server(
    settings: Settings,
    engine: Engine,
    shutdown: Shutdown,
    *,
    ready_file: Path | None = None,
    sidecars: Sequence[SidecarFactory] = (),
) -> int:
    """Serve ``engine`` until ``shutdown`` is requested; 0 on a clean stop, 1 if loading failed,
    128 + the signal when the stop came before the engine was ready (its build is cancelled)."""
    running = await start_server(settings, engine)
    started_sidecars: list[Sidecar] = []
    try:
        for factory in sidecars:
            started_sidecars.append(await factory(settings, running))
    except BaseException:
        await asyncio.gather(*(s.stop(0, shutdown.forced) for s in started_sidecars))
        await running.server.stop(0)
        raise
    log.info(
        "listening on %s (port %d, %s, %d sources configured); loading sources",
        settings.listen,
        running.port,
        "TLS" if settings.tls_enabled else "plaintext",
        len(settings.sources),
    )
    compiled, tokenizer = tokenizer_implementation()
    (log.info if compiled else log.warning)("tokenizer: %s", tokenizer)
    started = time.monotonic()
    status = 0
    start_task = asyncio.create_task(engine.start(), name="engine-start")
    stop_task = asyncio.create_task(shutdown.requested.wait(), name="shutdown-wait")
    health_task: asyncio.Task | None = None
    try:
        await asyncio.wait({start_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
        if start_task.done() and start_task.exception() is None:
            _log_ready(engine, time.monotonic() - started)
            health_task = asyncio.create_task(
                _follow_health(engine, running, ready_file), name="health-follow"
            )
            await stop_task
        elif start_task.done():
            exc = start_task.exception()
            log.error("engine failed to start: %s: %s", type(exc).__name__, exc)
            status = 1
        else:
            log.info("shutdown requested while loading: cancelling the index build")
            status = shutdown.interrupted_status()
    finally:
        tasks = [t for t in (start_task, stop_task, health_task) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await _drain(settings, engine, running, shutdown, ready_file, started_sidecars)
    return status


async def _drain(
    settings: Settings,
    engine: Engine,
    running: RunningServer,
    shutdown: Shutdown,
    ready_file: Path | None,
    sidecars: Sequence[Sidecar] = (),
) -> None:
    log.info(
        "shutting down: health NOT_SERVING, draining in-flight calls (grace %.1fs)",
        settings.grace_seconds,
    )
    if ready_file is not None:
        with contextlib.suppress(OSError):
            ready_file.unlink()
    running.status = running.current_status = NOT_SERVING
    await running.health.enter_graceful_shutdown()
    side = [asyncio.create_task(s.stop(settings.grace_seconds, shutdown.forced)) for s in sidecars]
    stopping = asyncio.create_task(_stop_when_drained(running, settings.grace_seconds))
    forced = asyncio.create_task(shutdown.forced.wait())
    await asyncio.wait({stopping, forced}, return_when=asyncio.FIRST_COMPLETED)
    if not stopping.done():
        log.warning("second signal: cancelling in-flight calls")
        await running.server.stop(0)
        await stopping
    forced.cancel()
    await asyncio.gather(*side)
    await engine.stop()
    log.info("stopped")


async def _stop_when_drained(running: RunningServer, grace: float) -> None:
    """Refuse new calls, let retrieval calls finish within ``grace``, then close the rest.

    ``server.stop(grace)`` alone would also wait for open health Watch streams, which never end
    by themselves; once the retrieval calls that matter have drained, a second, immediate stop
    closes those streams (a smaller grace in a later call shortens the first one).
    """
    stopping = asyncio.create_task(running.server.stop(grace))
    limiter = running.limiter
    while limiter is not None and limiter.in_flight > 0 and not stopping.done():
        await asyncio.sleep(0.02)
    if not stopping.done():
        await running.server.stop(0)
    await stopping
