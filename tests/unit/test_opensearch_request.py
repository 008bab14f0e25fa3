"""The cluster query of an ``opensearch`` source weighs fields as the local index does."""

from __future__ import annotations

from pathlib import Path

import pytest

from scriptorium.domain.model import Query
from scriptorium.plugins import load_registry
from scriptorium.settings.ranking import ranking_settings
from scriptorium.sources.base import SourceConfig, SourceContext
from scriptorium.sources.remote import RemoteContext
from scriptorium_plugins.opensearch.source import OpenSearchSource


def _fields(tmp_path: Path, reads: str, ranking: dict) -> list[str]:
    config = SourceConfig(
        "cluster", "opensearch", None, options={"hosts": ["127.0.0.1:9"], "reads": reads}
    )
    source = OpenSearchSource(config, SourceContext(extractors=load_registry().extractor_chain))
    source.bind(RemoteContext(ranking=ranking_settings(ranking), state_dir=tmp_path))
    request = source._request(Query(text="path params", terms=("path", "param")), 10)
    return request["query"]["bool"]["must"][0]["multi_match"]["fields"]


@pytest.mark.parametrize(
    ("reads", "ranking", "path_boost"),
    [
        ("markdown", {}, 0.5),
        ("markdown", {"path_weight": 0.8}, 0.8),
        ("markdown", {"docs_path_weight": 2.0}, 2.0),
        ("code", {"docs_path_weight": 2.0}, 0.5),
        ("code", {"path_weight": 0.3, "docs_path_weight": 2.0}, 0.3),
    ],
)
def test_the_path_boost_is_the_corpus_one(tmp_path, reads, ranking, path_boost):
    body, heading, path = _fields(tmp_path, reads, ranking)
    assert path.rsplit("^", 1)[1] == str(path_boost)
    assert body.endswith("^1.0") and heading.endswith("^1.0")


def _request(tmp_path: Path, query: Query) -> dict:
    config = SourceConfig("cluster", "opensearch", None, options={"hosts": ["127.0.0.1:9"]})
    source = OpenSearchSource(config, SourceContext(extractors=load_registry().extractor_chain))
    source.bind(RemoteContext(ranking=ranking_settings({}), state_dir=tmp_path))
    return source._request(query, 10)["query"]["bool"]["must"][0]


def test_a_question_is_one_match_of_every_term(tmp_path):
    matcher = _request(tmp_path, Query(text="path params", terms=("path", "param")))
    assert matcher["multi_match"]["query"] == "path param"
    same = _request(tmp_path, Query(text="x", terms=("path", "param"), weights=(1.0, 1.0)))
    assert same == matcher


def test_a_pasted_texts_terms_carry_their_weights(tmp_path):
    query = Query(text="x", terms=("item_id", "item", "declar"), weights=(3.0, 1.0, 0.5))
    matcher = _request(tmp_path, query)
    clauses = matcher["bool"]["should"]
    assert [c["multi_match"]["query"] for c in clauses] == ["item_id", "item", "declar"]
    assert [c["multi_match"].get("boost", 1.0) for c in clauses] == [3.0, 1.0, 0.5]
    assert matcher["bool"]["minimum_should_match"] == 1
    assert all(c["multi_match"]["type"] == "most_fields" for c in clauses)
