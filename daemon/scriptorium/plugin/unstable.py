"""The unstable plugin API: internals a plugin may borrow, with no promise they stay.

A plugin that forwards a daemon's answers (``peer``), keeps its own lexical index of a remote
site (``mkdocs``) or pushes the daemon's build to a cluster (``opensearch``) needs more than the
stable surface in ``scriptorium.plugin``: the message conversion of the wire contract, the index
schema and query builder, the build's helper processes, the fault pauses tests hold a stage with.
Those follow the daemon's internals and may change in any release without notice; a plugin that
imports them pins the Scriptorium version it was written for. Everything here is imported on first
use, so a plugin module that names one of them pays for gRPC or tantivy only when it uses it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scriptorium.faults import pause as fault_pause
    from scriptorium.grpc import convert as wire
    from scriptorium.grpc.status import resolution_from_error
    from scriptorium.index import schema as index_schema
    from scriptorium.index.fields import block_tokens
    from scriptorium.index.parallel import helper_count, load_streaming
    from scriptorium.index.queries import FieldWeights, build_query
    from scriptorium.plugins import load_registry as load_plugins

# Name -> (module, attribute; None for the module itself), imported on first use.
_LAZY: dict[str, tuple[str, str | None]] = {
    # the wire contract: domain outcomes to and from the generated messages
    "wire": ("scriptorium.grpc.convert", None),
    "resolution_from_error": ("scriptorium.grpc.status", "resolution_from_error"),
    # the lexical index: its schema, a block's tokens, the query builder and its weights
    "index_schema": ("scriptorium.index.schema", None),
    "block_tokens": ("scriptorium.index.fields", "block_tokens"),
    **{n: ("scriptorium.index.queries", n) for n in ("FieldWeights", "build_query")},
    # a build's helper processes, streaming documents as they are cut
    **{n: ("scriptorium.index.parallel", n) for n in ("helper_count", "load_streaming")},
    # how those helpers load the plugins (load_streaming's load_plugins)
    "load_plugins": ("scriptorium.plugins", "load_registry"),
    # tests hold a stage with SCRIPTORIUM_FAULT_PAUSE (see scriptorium.faults)
    "fault_pause": ("scriptorium.faults", "pause"),
}


def __getattr__(name: str) -> Any:
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module 'scriptorium.plugin.unstable' has no attribute {name!r}")
    module = importlib.import_module(found[0])
    value = module if found[1] is None else getattr(module, found[1])
    globals()[name] = value  # asked once
    return value


__all__ = [
    "FieldWeights",
    "block_tokens",
    "build_query",
    "fault_pause",
    "helper_count",
    "index_schema",
    "load_plugins",
    "load_streaming",
    "resolution_from_error",
    "wire",
]
