"""Retrieval evaluation: an evaluation set, a harness that replays it over gRPC, and run records.

Scoring lives in pure functions (``scoring``) so tests and ranking-lever measurements reuse the
exact arithmetic the harness reports. ``cli.main`` is the ``scriptorium eval`` entry point.
"""

from scriptorium.evaluation.evalset import Case, EvalSetError, load_eval_set, parse_lines
from scriptorium.evaluation.scoring import aggregate_run, score_search

__all__ = [
    "Case",
    "EvalSetError",
    "aggregate_run",
    "load_eval_set",
    "parse_lines",
    "score_search",
]
