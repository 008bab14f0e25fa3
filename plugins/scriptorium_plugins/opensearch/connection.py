"""The client a source (and a push) talks to the cluster with: every node, retries, TLS, auth.

TLS and basic auth are opensearch-py's own arguments, passed through from the source's keys;
the password is read from an environment variable so it never sits in a configuration file.
"""

from __future__ import annotations

import os
from typing import Any

from opensearchpy import OpenSearch

from scriptorium.plugin import SourceConfig

# A node restarting or a primary moving: the call is tried again on another node.
RETRY_STATUSES = (429, 502, 503, 504)


def client_for(
    hosts: list[str], timeout: float, security: dict[str, Any] | None = None
) -> OpenSearch:
    """A client over every node; a dead node is skipped and the call retried on another.
    ``security`` holds the TLS and basic-auth arguments of ``security_options``."""
    nodes = []
    for host in hosts:
        address, _, port = host.rpartition(":")
        nodes.append({"host": address or host, "port": int(port) if port.isdigit() else 9200})
    return OpenSearch(
        hosts=nodes,
        timeout=timeout,
        max_retries=len(nodes) + 1,
        retry_on_timeout=True,
        retry_on_status=RETRY_STATUSES,
        http_compress=False,
        **(security or {}),
    )


def security_options(config: SourceConfig) -> dict[str, Any]:
    """opensearch-py's TLS and auth arguments from the source's keys; the password is read from
    the environment variable ``password_env`` names, never from the configuration file."""
    where = f"source {config.name!r}"
    options = config.options
    out: dict[str, Any] = {}
    if options.get("use_ssl"):
        out["use_ssl"] = True
        out["verify_certs"] = bool(options.get("verify_certs", True))
        if options.get("ca_certs"):
            out["ca_certs"] = str(options["ca_certs"])
        if not out["verify_certs"]:
            out["ssl_show_warn"] = False
    username = options.get("username")
    if username:
        variable = options.get("password_env") or ""
        if not variable or variable not in os.environ:
            raise ValueError(f"{where}: username needs password_env, a set environment variable")
        out["http_auth"] = (str(username), os.environ[variable])
    return out
