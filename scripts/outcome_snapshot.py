"""Record (or compare) search, fetch and compose outcomes over the FastAPI corpus, in-process.

A refactoring aid: ``record OUT.json`` before a change, ``compare OUT.json`` after it; any
outcome that differs (trace ids aside) is printed and the exit status is 1.

    .venv/bin/python scripts/outcome_snapshot.py record /tmp/before.json
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from datetime import datetime
from enum import Enum
from pathlib import Path

from scriptorium.domain.model import Corpus
from scriptorium.domain.outcomes import (
    ContentParams,
    FlowParams,
    GuideParams,
    RelatedParams,
    RetrievalError,
    SearchParams,
)
from scriptorium.engine.local import create_engine
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.support.daemon import CORPUS, write_fastapi_config  # noqa: E402

WORK = Path("/tmp/outcome-snapshot")


def plain(value):
    """JSON-ready, trace ids dropped (they differ per call)."""
    if dataclasses.is_dataclass(value):
        return {
            f.name: plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name != "trace_id"
        }
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def queries() -> list[str]:
    lines = (ROOT / "eval/fastapi.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    found = [row["query"] for row in rows if "query" in row]
    return [*found, "", "   ", "*", "the a of", "FastAPI", "APIRouter include_router prefix"]


async def run(engine) -> dict:
    out: dict = {}

    async def call(key: str, coro) -> None:
        try:
            out[key] = plain(await coro)
        except RetrievalError as exc:
            out[key] = {"error": type(exc).__name__, "message": str(exc)}

    modes = ["default", *sorted(m for m in engine.registry.modes if m != "default")]
    for i, text in enumerate(queries()):
        explain = i % 2 == 0
        for mode in modes:
            await call(
                f"s|{text}|{mode}|{explain}",
                engine.search(SearchParams(query=text, mode=mode, explain=explain)),
            )
        kinds = (Corpus.CODE,) if i % 3 else (Corpus.DOCS,)
        await call(
            f"k|{text}|{kinds}",
            engine.search(
                SearchParams(
                    query=text,
                    kinds=kinds,
                    explain=not explain,
                    top_k=5,
                    token_budget=300 * (i % 2),
                )
            ),
        )
    refs = []
    for text in queries()[:40]:
        outcome = await engine.search(SearchParams(query=text, top_k=3))
        refs += [h.ref_id for h in outcome.hits]
        for hit in outcome.hits[:2]:
            await call(f"f|{hit.ref_id}", engine.get_content(ContentParams(ref_id=hit.ref_id)))
            await call(
                f"l|{hit.location}",
                engine.get_content(ContentParams(location=hit.location, mode="full")),
            )
    for i in range(0, min(len(refs), 60), 3):
        chunk = refs[i : i + 3]
        await call(f"r|{chunk}", engine.expand_related(RelatedParams(chunk)))
        await call(f"w|{chunk}", engine.summarize_flow(FlowParams(chunk, "how it works")))
    for text in queries()[:25]:
        await call(f"g|{text}", engine.guide_implementation(GuideParams(text)))
    for row in (json.loads(line) for line in (ROOT / "eval/fastapi.jsonl").open()):
        if "fetch_location" in row:
            location = row["fetch_location"]
            await call(f"L|{location}", engine.get_content(ContentParams(location=location)))
    out["sources"] = [
        {k: v for k, v in plain(r).items() if k not in ("staleness_seconds", "indexed_at")}
        for r in engine.list_sources()
    ]
    return out


def main() -> int:
    action, path = sys.argv[1], Path(sys.argv[2])
    WORK.mkdir(exist_ok=True)
    config = write_fastapi_config(WORK / "scriptorium.toml", CORPUS)
    settings = load_settings(config, state_dir=str(WORK / "state"))
    engine = create_engine(settings, load_registry())

    async def go() -> dict:
        await engine.start()
        try:
            return await run(engine)
        finally:
            await engine.stop()

    found = asyncio.run(go())
    if action == "record":
        path.write_text(json.dumps(found, indent=1, sort_keys=True, default=str))
        print(f"recorded {len(found)} outcomes in {path}")
        return 0
    before = json.loads(path.read_text())
    now = json.loads(json.dumps(found, sort_keys=True, default=str))
    bad = [k for k in sorted(set(before) | set(now)) if before.get(k) != now.get(k)]
    for key in bad[:20]:
        print("DIFFERS:", key)
    print(f"{len(now)} outcomes, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
