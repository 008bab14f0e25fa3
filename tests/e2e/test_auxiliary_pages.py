"""A migration guide names every API twice, old and new, and an error reference shows every
feature once more in the example that makes it fail: served as ``scriptorium serve REPO``
serves a clone, a question about using one gets the page about it first and those pages below
(explain says why), and a question that asks to migrate, or speaks of the error, gets them."""

from __future__ import annotations

import pytest

from tests.support.daemon import explained, serving_files

FILES = {
    "docs/timeouts.md": "# Timeouts\n\nEvery request has a timeout of five seconds. Pass "
    "`timeout=10` to a client to set a longer timeout for its requests.\n",
    "docs/migration.md": "# Migrating to version 2\n\n## Timeouts\n\nIn version 1 the timeout "
    "was set per request with `request_timeout`; in version 2 set a timeout on the client "
    "with `timeout`. A timeout of a request, a timeout of a client: set the timeout once.\n",
    "docs/integrations/proxy.md": "# Proxy\n\nThe proxy tool reads the client's timeout: set "
    "a timeout for requests with `timeout=10` and the proxy waits as long for them.\n",
    "docs/errors/exceptions.md": "# Exceptions\n\n## TimeoutException\n\nRaised when a "
    "request takes longer than the timeout set: set a timeout on the client with `timeout=10` "
    "and a request over it raises it. Every timeout of a request set too short raises it.\n",
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    with serving_files(tmp_path_factory.mktemp("migration"), FILES) as served:
        yield served


def test_a_question_about_using_an_api_gets_its_page_before_the_guide(daemon):
    results = explained(daemon, "set a timeout for requests")
    pages = [r.location.partition("#")[0] for r in results]
    assert pages[0] == "docs/timeouts", pages
    for page, kind in (
        ("docs/migration", "migration"),
        ("docs/errors/exceptions", "errors"),
        ("docs/integrations/proxy", "integrations"),
    ):
        found = results[pages.index(page)]
        reasons = {reason.name: reason.detail for reason in found.reasons}
        assert reasons.get("auxiliary") == kind, (page, found.reasons)


def test_a_question_asking_to_migrate_gets_the_guide(daemon):
    results = explained(daemon, "migrate the request timeout to version 2")
    assert results[0].location.startswith("docs/migration"), [r.location for r in results]
    assert "auxiliary" not in {x.name for x in results[0].reasons}, results[0].reasons


def test_a_question_speaking_of_the_error_gets_the_error_reference(daemon):
    results = explained(daemon, "which exception is raised when a request times out")
    assert results[0].location.startswith("docs/errors/exceptions"), [r.location for r in results]
    assert "auxiliary" not in {x.name for x in results[0].reasons}, results[0].reasons


def test_a_question_naming_the_tool_gets_its_integration_page(daemon):
    results = explained(daemon, "set a timeout for requests through the proxy tool")
    assert results[0].location.startswith("docs/integrations/proxy"), [r.location for r in results]
    assert "auxiliary" not in {x.name for x in results[0].reasons}, results[0].reasons
