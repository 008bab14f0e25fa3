"""Structure of source code from its lines alone: definitions, routes, wiring and imports.

These helpers are regular-expression based on purpose. They run on the request path (GetContent
highlights, SummarizeFlow steps, implementation-mode boosts) over any language, where parsing is
too slow or unavailable, and a near miss costs a highlight, not a wrong answer. Line numbers
are 1-based. One module per job: ``families`` (language families, non-code rows),
``signatures``, ``routes``, ``wiring`` (dependency injection, decorators, configuration),
``imports``, and the two callers' views, ``highlights`` (GetContent) and ``flow``
(SummarizeFlow). Import from here.
"""

from scriptorium.text.code.families import FlowCandidate, Range
from scriptorium.text.code.flow import code_flow_candidates
from scriptorium.text.code.highlights import interesting_code_ranges
from scriptorium.text.code.imports import import_targets
from scriptorium.text.code.routes import Route, route_lines, routes
from scriptorium.text.code.signatures import Signature, signature_lines, signatures
from scriptorium.text.code.wiring import is_configuration, is_decorator, is_dependency_injection

__all__ = [
    "FlowCandidate",
    "Range",
    "Route",
    "Signature",
    "code_flow_candidates",
    "import_targets",
    "interesting_code_ranges",
    "is_configuration",
    "is_decorator",
    "is_dependency_injection",
    "route_lines",
    "routes",
    "signature_lines",
    "signatures",
]
