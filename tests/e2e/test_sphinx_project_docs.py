"""A repository with Sphinx's own docs in doc/ through a daemon: toctree breadcrumbs, excludes."""

from __future__ import annotations

import shutil
from pathlib import Path

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.waiting import wait_for

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/sphinx"


def search(stub, query: str) -> list[pb.SearchResult]:
    reply = stub.Search(pb.SearchRequest(query=query, kinds=[pb.CORPUS_DOCS]), timeout=30)
    return list(reply.results)


def test_a_sphinx_project_is_read_with_its_toctrees(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    stale = repo / "doc/_build/html/_sources/usage/quickstart.rst"
    stale.parent.mkdir(parents=True)
    stale.write_text("Stale copy\n==========\n\nA wombat in the build output.\n", "utf-8")
    with running([str(repo), "--watch-interval", "0.2"], tmp_path / "state") as daemon:
        stub = daemon.stub
        hits = search(stub, "sphinx-quickstart interactive questions project")
        top = next(h for h in hits if h.location.startswith("doc/usage/quickstart#"))
        assert list(top.section_path)[:2] == ["Sphinx", "Getting started"]
        nested = search(stub, "cross-referencing arbitrary locations ref role labels")
        crossref = next(h for h in nested if h.location.startswith("doc/usage/referencing#"))
        assert list(crossref.section_path)[:3] == ["Sphinx", "Using Sphinx", "Cross-references"]
        # conf.py's exclude_patterns (['_build']) keep the built copies out.
        assert not [h for h in search(stub, "wombat build output") if "_build" in h.location]

        request = pb.GetContentRequest(location="doc/usage/quickstart", mode=pb.CONTENT_MODE_FULL)
        page = stub.GetContent(request, timeout=30)
        assert page.resolution.reason == "resolved"

        quickstart = repo / "doc/usage/quickstart.rst"
        quickstart.write_text(
            quickstart.read_text("utf-8") + "\nPlatypus notes\n--------------\n\nA platypus.\n",
            "utf-8",
        )
        assert wait_for(
            lambda: any(
                list(h.section_path) == ["Sphinx", "Getting started", "Platypus notes"]
                for h in search(stub, "platypus notes")[:1]
            )
        )
