"""The daemon: plugins loaded, the configuration checked, the engine built and served.

The composition of a running daemon, above the transport: ``grpc/server`` binds, serves,
reports health and drains a given engine; the engine (``engine/local``) builds the services;
this module puts them together for ``scriptorium serve`` (and the HTTP door rides along as a
sidecar the command hands in). ``index build`` builds the same engine without it, so a build
never imports the gRPC server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Sequence
from pathlib import Path

from scriptorium import telemetry
from scriptorium.engine.checks import validate_source_kinds
from scriptorium.grpc.server import (
    Shutdown,
    SidecarFactory,
    check_http_address,
    check_listen_address,
    run_server,
)
from scriptorium.plugins import Registry, load_registry
from scriptorium.settings.config import Settings

log = logging.getLogger("scriptorium.grpc.server")


async def serve(
    settings: Settings,
    *,
    registry: Registry | None = None,
    ready_file: Path | None = None,
    sidecars: Sequence[SidecarFactory] = (),
) -> int:
    """Run the daemon until SIGTERM or SIGINT; the exit status for the process."""
    if registry is None:
        registry = load_registry()
    validate_source_kinds(settings, registry)
    check_listen_address(settings)
    if settings.http_listen is not None:
        check_http_address(settings)
    from scriptorium.engine.local import LocalEngine

    engine = LocalEngine(settings, registry)
    telemetry.configure(settings.telemetry)
    telemetry.observe_engine(engine)
    shutdown = Shutdown()
    loop = asyncio.get_running_loop()
    previous: dict[signal.Signals, object] = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            handler = signal.getsignal(sig)
            loop.add_signal_handler(sig, _on_signal, sig, shutdown)
            previous[sig] = handler
    try:
        return await run_server(
            settings, engine, shutdown, ready_file=ready_file, sidecars=sidecars
        )
    finally:
        for sig, handler in previous.items():
            loop.remove_signal_handler(sig)
            if handler is not None:
                signal.signal(sig, handler)
        # Flushes spans and metrics still buffered (in a thread: an exporter may block).
        await asyncio.to_thread(telemetry.shutdown)


def _on_signal(sig: signal.Signals, shutdown: Shutdown) -> None:
    log.info("received %s: shutdown requested", sig.name)
    shutdown.request(sig)
