"""ExpandRelated over a documentation tree with translations, through a real daemon: from an
English section, another language's copy of the same page is not related material; from a
translated section, neither is a third language's copy, while the English original is."""

from __future__ import annotations

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.trees import markdown_config, write_tree

CORS = """# CORS

## Use the CORS middleware

Add the CORS middleware to the application and list the allowed origins, the allowed
methods and the allowed headers of cross-origin requests.

## Preflight requests

The middleware answers preflight OPTIONS requests for the allowed origins.
"""

MIDDLEWARE = """# Middleware

## Add a middleware

A middleware runs for every request before the application and for every response after it;
the CORS middleware is one, answering cross-origin requests for the allowed origins.
"""


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("related-translations")
    pages = {"en/docs/cors.md": CORS, "en/docs/middleware.md": MIDDLEWARE}
    for language in ("de", "fr", "es"):
        # A translation keeps the code words and the headings' English names.
        pages[f"{language}/docs/cors.md"] = CORS
    # Pages on other subjects, so that the CORS pages' words are distinctive.
    for n, subject in enumerate(("caching", "logging", "tokens", "uploads", "sessions") * 4):
        pages[f"en/docs/topic{n}.md"] = f"# {subject.title()} {n}\n\nHow {subject} work.\n"
    docs = write_tree(root / "docs", pages)
    config = markdown_config(root / "config.toml", {"docs": docs})
    with running(["--config", str(config)], root / "state") as running_daemon:
        yield running_daemon


def related(daemon, location: str) -> list[str]:
    seed = daemon.stub.GetContent(pb.GetContentRequest(location=location), timeout=30)
    reply = daemon.stub.ExpandRelated(
        pb.ExpandRelatedRequest(ref_ids=[seed.ref_id], top_k=10), timeout=30
    )
    return [ref.location for ref in reply.related]


def test_an_english_sections_related_material_holds_no_copy_of_its_page(daemon):
    found = related(daemon, "en/docs/cors#use-the-cors-middleware")
    assert "en/docs/middleware#add-a-middleware" in found
    assert not [loc for loc in found if loc.startswith(("de/", "fr/", "es/"))], found


def test_a_translated_sections_related_material_keeps_the_original_not_other_copies(daemon):
    found = related(daemon, "de/docs/cors#use-the-cors-middleware")
    assert "en/docs/cors#use-the-cors-middleware" in found
    assert not [loc for loc in found if loc.startswith(("fr/", "es/"))], found
