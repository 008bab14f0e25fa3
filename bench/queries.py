"""The queries the benchmark sends."""

from __future__ import annotations

import json
from pathlib import Path

# A fixed rotation: English how-to phrasing, identifiers, Japanese and Chinese.
QUERIES = [
    "declare path parameters with types",
    "background tasks after response",
    "OAuth2PasswordBearer",
    "dependencies with yield",
    "CORS middleware allow origins",
    "パスパラメータ",
    "查询参数",
    "upload files with form data",
    "jsonable_encoder",
    "testing with TestClient",
]

EVAL_SET = Path(__file__).resolve().parents[1] / "eval" / "fastapi.jsonl"


def eval_queries(path: Path = EVAL_SET) -> list[str]:
    """Every distinct query of the evaluation set: realistic, and each one asked once, so
    caches keyed on blocks see a realistic spread rather than ten queries on repeat."""
    queries: list[str] = []
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            query = json.loads(line).get("query")
            if query and query not in queries:
                queries.append(query)
    return queries
