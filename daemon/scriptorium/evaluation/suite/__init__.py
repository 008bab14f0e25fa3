"""The ranking suite: external sets over pinned public repositories, beside plain baselines.

``sets`` loads the sets (``ds1000`` and ``fastapi_repo`` the two whose answers are mapped once
their pinned corpus is on disk), ``materialise`` writes each corpus from its git dir into a cache,
``corpus`` configures the daemon and the harness-side sources over it, ``baselines`` builds
whole-file and block BM25, ``run`` asks every system, ``metrics`` scores, ``report`` prints
tables and records and compares runs; ``cli`` is ``scriptorium eval --suite``.
"""
