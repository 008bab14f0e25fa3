"""``python -m scriptorium``: the same command as the ``scriptorium`` script."""

from scriptorium.cli import main

raise SystemExit(main())
