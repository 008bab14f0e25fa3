"""Scriptorium's first-party plugins, registered through the ``scriptorium`` entry-point group."""
