"""``python -m scriptorium``: the same command as the ``scriptorium`` script."""

from scriptorium.cli import main

if __name__ == "__main__":  # not when a spawned build worker imports the main module
    raise SystemExit(main())
