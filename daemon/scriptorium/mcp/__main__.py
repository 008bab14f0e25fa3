"""``python -m scriptorium.mcp``: the same as ``scriptorium mcp``."""

from scriptorium.mcp.command import main

raise SystemExit(main())
