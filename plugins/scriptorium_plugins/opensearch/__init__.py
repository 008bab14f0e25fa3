"""The ``opensearch`` source kind: a tree's blocks in an OpenSearch cluster.

``scriptorium index push`` cuts the source's ``root`` with the extractors of the local kind it
``reads`` (markdown, code, rst) and writes a new generation to the cluster; daemons search it
through ``alias`` and re-rank the window with their own pipeline. The source's module (and the
OpenSearch client) is imported only when such a source is configured.
"""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import ORDER_KEY, Key, deferred_factory, hookimpl

SETTINGS: tuple[Key, ...] = (
    Key("hosts", "strings", None, "host:port of the cluster's nodes (any live one answers)"),
    Key("alias", "string", None, "the alias daemons read (default: scriptorium-<name>)"),
    Key("reads", "string", "markdown", "the local kind whose extractors cut root at a push"),
    Key("include", "strings", None, "gitignore-style patterns of the files a push reads"),
    Key("exclude", "strings", [], "patterns of files a push never reads"),
    Key("shards", "integer", 1, "primary shards of each generation", minimum=1),
    Key("replicas", "integer", 1, "replicas of each shard (1: a node may fail)", minimum=0),
    Key("keep_generations", "integer", 2, "generations kept after a push", minimum=1),
    Key("bulk_actions", "integer", 1000, "actions per bulk request of a push", minimum=1),
    Key("bulk_threads", "integer", 2, "bulk requests a push keeps in flight", minimum=1),
    Key(
        "fill_replicas",
        "integer",
        0,
        "replicas while a push fills (0: fastest; a node lost then restarts the push)",
        minimum=0,
    ),
    Key(
        "lock_seconds",
        "number",
        600.0,
        "expiry of a push's lock (renewed as it writes)",
        minimum=10,
    ),
    Key("window", "integer", 100, "blocks asked of the cluster per search", minimum=1),
    Key("timeout_seconds", "number", 10.0, "deadline of one call to the cluster", minimum=0.1),
    Key("retry_cooldown_seconds", "number", 300.0, "pause after the cluster failed", minimum=0),
    Key("use_ssl", "bool", False, "speak HTTPS to the nodes"),
    Key("verify_certs", "bool", True, "check the nodes' certificates (with use_ssl)"),
    Key("ca_certs", "string", None, "CA bundle that signed the nodes' certificates"),
    Key("username", "string", None, "basic-auth user (the password comes from password_env)"),
    Key("password_env", "string", None, "environment variable holding the basic-auth password"),
    ORDER_KEY,
)


@hookimpl
def scriptorium_register_source_kinds(register: Callable[..., None]) -> None:
    register(
        "opensearch",
        deferred_factory("scriptorium_plugins.opensearch.source", "OpenSearchSource"),
        settings=SETTINGS,
    )
