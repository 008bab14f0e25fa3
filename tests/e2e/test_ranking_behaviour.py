"""Abstention, token budgets, freshness and priors, through a real daemon on a small tree."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from scriptorium.text import estimate_tokens
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running

PAGES = {
    "install.md": "---\ncanonical_key: install\n---\n# Install the gizmo\n\n"
    "Run gizmo-setup with the quokka flag to install the gizmo on a server.\n",
    "install-v2.md": "---\ncanonical_key: install\n---\n# Installing the gizmo\n\n"
    "Use the quokka installer; gizmo-setup is gone.\n",
    "legacy.md": "---\nsuperseded_by: modern\n---\n# Wombat configuration (legacy)\n\n"
    "Configure the wombat cache with wombat.conf and restart.\n",
    "modern.md": "# Wombat configuration\n\n"
    "Configure the wombat cache with the wombat settings file and restart.\n",
    "expired.md": "---\neffective_to: 2020-01-01\n---\n# Numbat policy 2019\n\n"
    "The numbat policy allows numbat exports.\n",
    "current.md": "---\neffective_from: 2020-01-01\n---\n# Numbat policy\n\n"
    "The numbat policy allows numbat exports after review.\n",
    "boosted.md": "---\nsearch:\n  boost: 3\n---\n# Dingo notes\n\nThe dingo appears once.\n",
    "plain.md": "# Dingo overview\n\nThe dingo appears once.\n",
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    root = tmp_path_factory.mktemp("ranking")
    docs = root / "docs"
    docs.mkdir()
    for name, text in PAGES.items():
        (docs / name).write_text(text, encoding="utf-8")
    for i in range(12):
        (docs / f"long{i}.md").write_text(
            f"# Platypus chapter {i}\n\n" + "The platypus lays eggs and swims. " * 60 + "\n",
            encoding="utf-8",
        )
    with running([str(docs)], root / "state") as d:
        yield d


def search(daemon, query: str, **kw) -> pb.SearchResponse:
    return daemon.stub.Search(pb.SearchRequest(query=query, **kw), timeout=30)


def pages(response: pb.SearchResponse) -> list[str]:
    return [r.location.split("#")[0] for r in response.results]


def test_no_candidates_abstains(daemon):
    response = search(daemon, "xylophone")
    assert not response.results
    assert response.abstained and response.abstain_reason == pb.ABSTAIN_REASON_NO_CANDIDATES


def test_low_confidence_when_the_specific_terms_are_missing(daemon):
    response = search(daemon, "platypus kubernetes helm operator rollout")
    assert response.results  # results are still returned: abstention is advice
    assert response.abstained and response.abstain_reason == pb.ABSTAIN_REASON_LOW_CONFIDENCE
    confident = search(daemon, "platypus lays eggs")
    assert not confident.abstained


def test_conflicting_effective_documents_are_reported(daemon):
    response = search(daemon, "install gizmo quokka")
    assert response.abstained
    assert response.abstain_reason == pb.ABSTAIN_REASON_CONFLICTING_SOURCES
    (conflict,) = response.conflicts
    assert conflict.key == "install"
    assert sorted(loc.split("#")[0] for loc in conflict.locations) == ["install", "install-v2"]
    assert len(conflict.ref_ids) == 2


def test_superseded_documents_are_demoted_with_a_reason(daemon):
    response = search(daemon, "wombat configuration cache", explain=True)
    order = pages(response)
    assert order.index("modern") < order.index("legacy")
    legacy = next(r for r in response.results if r.location.startswith("legacy"))
    assert legacy.superseded_by == "modern"
    assert "superseded" in {reason.name for reason in legacy.reasons}


def test_as_of_filters_documents_not_effective_then(daemon):
    now = search(daemon, "numbat policy exports")
    assert pages(now)[0] == "current"
    past = Timestamp()
    past.FromDatetime(datetime(2019, 6, 1, tzinfo=UTC))
    then = search(daemon, "numbat policy exports", as_of=past)
    assert pages(then) == ["expired"]
    expired = next(r for r in now.results if r.location.startswith("expired"))
    assert expired.effective_to.ToDatetime().year == 2020


def test_the_cli_passes_as_of_and_refuses_a_malformed_one(daemon):
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "scriptorium",
                "--format",
                "json",
                "search",
                *args,
                "--target",
                daemon.address,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )

    then = cli("numbat policy exports", "--as-of", "2019-06-01")
    assert then.returncode == 0, then.stderr
    assert [r["location"].split("#")[0] for r in json.loads(then.stdout)["results"]] == ["expired"]
    bad = cli("numbat policy exports", "--as-of", "last tuesday")
    assert bad.returncode == 2 and "ISO 8601" in bad.stderr


def test_page_boost_from_front_matter(daemon):
    response = search(daemon, "dingo", explain=True)
    assert pages(response)[:2] == ["boosted", "plain"]
    assert "page-boost" in {r.name for r in response.results[0].reasons}


def test_token_budget_keeps_the_best_whole_when_it_fits_and_trims_the_rest(daemon):
    unbounded = search(daemon, "platypus eggs swims", top_k=10, snippet_lines=10)
    assert len(unbounded.results) == 10
    top = unbounded.results[0]
    budget = estimate_tokens(top.snippet) + estimate_tokens(top.preview) + 100
    bounded = search(daemon, "platypus eggs swims", top_k=10, snippet_lines=10, token_budget=budget)
    best, rest = bounded.results[0], bounded.results[1:]
    assert best.ref_id == unbounded.results[0].ref_id
    assert (
        best.snippet == unbounded.results[0].snippet
        and best.preview == unbounded.results[0].preview
    )
    spent = sum(estimate_tokens(r.snippet) + estimate_tokens(r.preview) for r in bounded.results)
    assert bounded.tokens_used == spent
    assert spent <= budget
    assert len(bounded.results) < len(unbounded.results) or any(not r.snippet for r in rest)
    assert unbounded.tokens_used > bounded.tokens_used
    # A budget the best result alone exceeds shortens it rather than being overspent.
    tiny = search(daemon, "platypus eggs swims", top_k=10, snippet_lines=10, token_budget=10)
    assert tiny.results[0].ref_id == best.ref_id
    spent = sum(estimate_tokens(r.snippet) + estimate_tokens(r.preview) for r in tiny.results)
    assert tiny.tokens_used == spent <= 10


def test_explain_returns_the_understood_query_and_stages(daemon):
    response = search(daemon, "Platypus eggs", explain=True, top_k=3)
    understood = response.understood
    assert "platypus" in understood.terms and understood.term_count == len(understood.terms)
    assert understood.query_chars == len("Platypus eggs")
    stages = [s.stage for s in response.stages]
    assert stages[0] == "retrieve" and "diversify" in stages
    diversify = next(s for s in response.stages if s.stage == "diversify")
    assert diversify.kept == 3
    plain = search(daemon, "Platypus eggs", top_k=3)
    assert not plain.stages and not plain.results[0].reasons


def test_source_path_is_never_a_filter_for_surface(daemon):
    with_surface = search(daemon, "dingo", surface="wombat")
    assert pages(with_surface)[:2] == ["boosted", "plain"]
