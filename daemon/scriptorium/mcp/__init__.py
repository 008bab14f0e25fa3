"""The MCP bridge: Scriptorium's retrieval tools for agents, over the Model Context Protocol.

``scriptorium mcp`` (or ``python -m scriptorium.mcp``) runs :func:`main`.
"""

from scriptorium.mcp.command import main

__all__ = ["main"]
