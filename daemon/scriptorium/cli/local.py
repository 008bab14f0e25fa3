"""The commands that run here, without a daemon to ask: serve, index build, state, settings."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import logging
import sys
from pathlib import Path

from scriptorium import logfilters
from scriptorium.cli.output import (
    format_build_summary,
    format_state_dirs,
    print_json,
    size_text,
    when_text,
)
from scriptorium.cli.status import EXIT_FAILED, EXIT_OK
from scriptorium.index import progress, statedirs
from scriptorium.settings.config import ConfigError, Settings, load_settings


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logfilters.install(logging.getLogger().handlers)


def _apply_build_workers(settings: Settings, args: argparse.Namespace) -> None:
    if args.build_workers is not None:
        if args.build_workers < 0:
            raise ConfigError("--build-workers must be at least 0")
        settings.build_workers = args.build_workers


def cmd_serve(args: argparse.Namespace) -> int:
    from scriptorium.daemon import serve

    settings = load_settings(
        args.config,
        args.paths,
        listen=args.listen,
        state_dir=args.state_dir,
        http_listen=args.http,
        dependencies=args.dependencies,
    )
    if args.log_level:
        settings.log_level = args.log_level.upper()
    _apply_build_workers(settings, args)
    if args.watch is not None:
        settings.watch = args.watch
    if args.watch_interval is not None:
        if args.watch_interval <= 0:
            raise ConfigError("--watch-interval must be greater than 0")
        settings.watch_interval = args.watch_interval
    _configure_logging(settings.log_level)
    sidecars = []
    if settings.http_listen is not None:
        # Imported only when asked for: a daemon without HTTP never loads the ASGI stack.
        from scriptorium.http.server import http_sidecar

        sidecars.append(http_sidecar)
    with progress.attach(progress.ProgressRenderer(sys.stderr)):
        return asyncio.run(serve(settings, ready_file=args.ready_file, sidecars=sidecars))


def cmd_index_build(args: argparse.Namespace) -> int:
    from scriptorium.cancel import EXIT_INTERRUPTED, BuildCancelled, BuildSignals
    from scriptorium.engine.checks import validate_source_kinds
    from scriptorium.engine.local import build_index
    from scriptorium.index.generation import GenerationWriteError
    from scriptorium.plugins import load_registry

    settings = load_settings(
        args.config, args.paths, state_dir=args.state_dir, dependencies=args.dependencies
    )
    if args.log_level:
        settings.log_level = args.log_level.upper()
    _apply_build_workers(settings, args)
    _configure_logging(settings.log_level)
    registry = load_registry()
    validate_source_kinds(settings, registry)
    with BuildSignals() as signals, progress.attach(progress.ProgressRenderer(sys.stderr)):
        try:
            summary = build_index(settings, registry, stop=signals.event)
            if inspect.isawaitable(summary):
                summary = asyncio.run(summary)
        except BuildCancelled:  # the log has said so (and what was kept, if anything)
            return 128 + signals.signal if signals.signal else EXIT_INTERRUPTED
        except GenerationWriteError as exc:
            print(f"scriptorium: error: {exc}", file=sys.stderr)
            return EXIT_FAILED
    if args.format == "json":
        print_json(dict(summary))
    else:
        print(format_build_summary(dict(summary)))
    return EXIT_OK


def cmd_index_push(args: argparse.Namespace) -> int:
    """Every source that keeps its blocks in a cluster (``push``) gets a new generation."""
    from scriptorium.engine.checks import validate_source_kinds
    from scriptorium.plugins import load_registry
    from scriptorium.settings.ranking import ranking_settings
    from scriptorium.sources.base import SourceConfig, SourceContext
    from scriptorium.sources.remote import RemoteContext

    settings = load_settings(
        args.config, args.paths, state_dir=args.state_dir, dependencies=args.dependencies
    )
    if args.log_level:
        settings.log_level = args.log_level.upper()
    _configure_logging(settings.log_level)
    registry = load_registry()
    validate_source_kinds(settings, registry)
    context = SourceContext(extractors=registry.extractor_chain)
    ranking = ranking_settings(settings.ranking or {})
    wanted = set(args.source or ())
    targets = []
    for config in settings.sources:
        if wanted and config.name not in wanted:
            continue
        try:
            source = registry.source_factory(config.kind)(config, context)
        except ValueError as exc:  # a source's own check of its keys: one sentence
            raise ConfigError(str(exc)) from None
        if callable(getattr(source, "push", None)):
            targets.append(source)
    unknown = wanted - {s.name for s in targets}
    if unknown or not targets:
        named = ", ".join(sorted(unknown)) if unknown else "none is configured"
        raise ConfigError(f"no pushable source (a kind that keeps blocks in a cluster): {named}")

    def build_reader(config: SourceConfig):
        return registry.source_factory(config.kind)(config, context)

    failed = False
    summaries = {}
    for source in targets:
        source.bind(RemoteContext(ranking=ranking, state_dir=Path(settings.state_dir or ".")))
        try:
            summaries[source.name] = source.push(build_reader, settings.build_workers)
        except Exception as exc:  # one sentence per source; the alias still names the old one
            failed = True
            print(f"scriptorium: error: push of {source.name!r} failed: {exc}", file=sys.stderr)
        finally:
            closer = getattr(source, "aclose", None)
            if closer is not None:
                asyncio.run(closer())
    if args.format == "json":
        print_json(summaries)
    else:
        for name, summary in summaries.items():
            print(f"{name}: " + ", ".join(f"{k}={v}" for k, v in summary.items()))
    return EXIT_FAILED if failed else EXIT_OK


def cmd_state(args: argparse.Namespace) -> int:
    """``state list`` and ``state prune``: local, no daemon needed."""
    if args.state_command == "list":
        entries = statedirs.list_state_dirs()
        if args.format == "json":
            print_json(
                {"root": str(statedirs.cache_root()), "state_dirs": [e.to_json() for e in entries]}
            )
        else:
            print(format_state_dirs(entries))
        return EXIT_OK
    result = statedirs.prune(args.older_than, dry_run=args.dry_run)
    if args.format == "json":
        print_json(
            {
                "dry_run": args.dry_run,
                "removed": [e.to_json() for e in result.removed],
                "kept_in_use": [e.to_json() for e in result.kept_in_use],
                "kept_recent": [e.to_json() for e in result.kept_recent],
            }
        )
        return EXIT_OK
    verb = "would remove" if args.dry_run else "removed"
    for entry in result.removed:
        used = when_text(entry.last_used)
        print(f"{verb} {entry.path} ({size_text(entry.size_bytes)}, last used {used})")
    for entry in result.kept_in_use:
        print(f"kept {entry.path}: in use")
    freed = sum(e.size_bytes for e in result.removed)
    print(
        f"{verb} {len(result.removed)} state director{'y' if len(result.removed) == 1 else 'ies'}"
        f" ({size_text(freed)}); kept {len(result.kept_in_use)} in use,"
        f" {len(result.kept_recent)} used in the last {args.older_than:g} days"
    )
    return EXIT_OK


def cmd_settings(args: argparse.Namespace) -> int:
    """Every declared configuration table; ``--format markdown`` is docs/settings.md,
    ``--format levers`` the lever table of docs/ranking.md."""
    from scriptorium.cli import reference

    tables = reference.all_tables(first_party_only=not args.all_plugins)
    if args.format == "json":
        print_json({"tables": reference.as_json(tables)})
    elif args.format == "markdown":
        sys.stdout.write(reference.render_markdown(tables))
    elif args.format == "levers":
        sys.stdout.write(reference.render_levers())
    else:
        sys.stdout.write(reference.render_text(tables))
    return EXIT_OK
