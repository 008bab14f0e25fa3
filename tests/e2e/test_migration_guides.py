"""A migration guide names every API twice, old and new: served as ``scriptorium serve REPO``
serves a clone, a question about using one gets the page about it first and the guide below
(explain says why), and a question that asks to migrate gets the guide."""

from __future__ import annotations

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.trees import write_tree

FILES = {
    "docs/timeouts.md": "# Timeouts\n\nEvery request has a timeout of five seconds. Pass "
    "`timeout=10` to a client to set a longer timeout for its requests.\n",
    "docs/migration.md": "# Migrating to version 2\n\n## Timeouts\n\nIn version 1 the timeout "
    "was set per request with `request_timeout`; in version 2 set a timeout on the client "
    "with `timeout`. A timeout of a request, a timeout of a client: set the timeout once.\n",
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    root = tmp_path_factory.mktemp("migration")
    with running([str(write_tree(root / "repo", FILES))], root / "state") as served:
        yield served


def _search(daemon, query: str) -> list[pb.SearchResult]:
    request = pb.SearchRequest(query=query, explain=True)
    return list(daemon.stub.Search(request, timeout=30).results)


def test_a_question_about_using_an_api_gets_its_page_before_the_guide(daemon):
    results = _search(daemon, "set a timeout for requests")
    pages = [r.location.partition("#")[0] for r in results]
    assert pages[0] == "docs/timeouts", pages
    guide = results[pages.index("docs/migration")]
    reasons = {reason.name: reason.detail for reason in guide.reasons}
    assert reasons.get("auxiliary") == "migration", guide.reasons


def test_a_question_asking_to_migrate_gets_the_guide(daemon):
    results = _search(daemon, "migrate the request timeout to version 2")
    assert results[0].location.startswith("docs/migration"), [r.location for r in results]
    assert all("auxiliary" not in {x.name for x in r.reasons} for r in results)
