"""The semantic retriever through a real daemon: the lexical answer serves while the vectors
are made, and once they exist a question none of whose words the answer holds finds it;
ListSources reports the vectors' progress, and a restart serves the vectors kept on disk."""

from __future__ import annotations

import re
import shutil

import pytest
from grpc_health.v1 import health_pb2

from scriptorium.faults import times_reached
from scriptorium.semantic import vectors as V
from scriptorium.semantic.model import ModelMissing, find_model
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.trees import docs_and_code_config, markdown_config, write_tree
from tests.support.vector_files import rewrite_as_format_2
from tests.support.waiting import wait_for

PAGES = {
    "retries.md": "# Retrying failed calls\n\nWhen a request fails because the network "
    "dropped, the client tries again up to three times, waiting longer each time.\n",
    "pool.md": "# Connection pool\n\nThe pool keeps up to ten connections open to each host "
    "and reuses them for later requests.\n",
    "tokens.md": "# Tokens\n\nSend a bearer token in the authorization header of every request.\n",
    "cache.md": "# Caching responses\n\nResponses marked cacheable are stored on disk and "
    "served without a round trip.\n",
}
EXTRA = "\n\nIdle connections are closed after a minute without a request.\n"
# Not one of these words is in any page.
MEANING = "automatic second attempt after an outage"


def _model_or_skip() -> None:
    try:
        find_model()
    except ModelMissing as exc:
        import os

        if os.environ.get("CI"):
            raise  # make venv installs it: under CI a missing model is a failure
        pytest.skip(str(exc))


def _vectors(daemon) -> list[pb.SourceStatus]:
    return list(daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=10).sources)


def _paths(daemon, query: str) -> list[str]:
    response = daemon.stub.Search(pb.SearchRequest(query=query, top_k=5), timeout=30)
    return [r.location.split("#")[0] for r in response.results]


def test_lexical_first_then_meaning(tmp_path):
    _model_or_skip()
    docs = write_tree(tmp_path / "docs", PAGES)
    config = markdown_config(tmp_path / "config.toml", {"docs": docs})
    release = tmp_path / "release-vectors"
    env = {"SCRIPTORIUM_SEMANTIC": "on", "SCRIPTORIUM_FAULT_PAUSE": f"vectors.encode={release}"}
    state = tmp_path / "state"
    with running(["--config", str(config)], state, env=env) as daemon:
        assert wait_for(lambda: times_reached(release) >= 1)
        # Held before encoding: Search answers lexically, ListSources says so.
        assert _paths(daemon, "connection pool")[0] == "pool"
        assert _paths(daemon, MEANING) == []
        (source,) = _vectors(daemon)
        assert source.vectors_state in ("waiting", "encoding")
        assert source.vectors_done < source.vectors_total or source.vectors_total == 0
        release.touch()
        assert wait_for(lambda: _vectors(daemon)[0].vectors_state == "ready")
        (source,) = _vectors(daemon)
        assert source.vectors_done == source.vectors_total == 4
        assert _paths(daemon, MEANING)[0] == "retries"
        assert _paths(daemon, "connection pool")[0] == "pool"
        response = daemon.stub.Search(pb.SearchRequest(query=MEANING, explain=True), timeout=30)
        first = response.results[0]
        assert first.scores.dense > 0.5
        assert "semantic" in {reason.name for reason in first.reasons}
    assert any(p.name.startswith("gen-") for p in (state / "vectors").rglob("*.vec"))
    # A restart serves the vectors on disk: nothing is encoded again.
    with running(["--config", str(config)], state, env={"SCRIPTORIUM_SEMANTIC": "on"}) as again:
        assert wait_for(lambda: _vectors(again)[0].vectors_state == "ready")
        assert _paths(again, MEANING)[0] == "retries"
        assert "0 encoded (its file on disk)" in again.full_log()
    # A file of the earlier format (a row for every block) serves and is written in this one.
    (path,) = (state / "vectors").rglob("gen-*.vec")
    rewrite_as_format_2(path)
    assert path.read_bytes().startswith(V.MAGIC_2)
    with running(["--config", str(config)], state, env={"SCRIPTORIUM_SEMANTIC": "on"}) as third:
        assert wait_for(lambda: _vectors(third)[0].vectors_state == "ready")
        assert _paths(third, MEANING)[0] == "retries"
        assert "0 encoded (its file on disk)" in third.full_log()
    assert path.read_bytes().startswith(V.MAGIC)


def test_a_translations_source_gets_no_vectors(tmp_path):
    """One source per language (``docs/de/docs`` beside ``docs/en/``): the model reads
    English, so only the English source's pages are encoded; the German ones still answer by
    their words."""
    _model_or_skip()
    english = write_tree(tmp_path / "docs" / "en" / "docs", PAGES)
    german = write_tree(
        tmp_path / "docs" / "de" / "docs",
        {
            "wiederholung.md": "# Wiederholte Anfragen\n\nSchlaegt eine Anfrage fehl, "
            "versucht der Client es bis zu dreimal erneut.\n",
            "zwischenspeicher.md": "# Zwischenspeicher\n\nAntworten werden auf der Festplatte "
            "gespeichert.\n",
        },
    )
    config = markdown_config(tmp_path / "config.toml", {"en": english, "de": german})
    with running(
        ["--config", str(config)], tmp_path / "state", env={"SCRIPTORIUM_SEMANTIC": "on"}
    ) as daemon:
        assert wait_for(lambda: all(s.vectors_state == "ready" for s in _vectors(daemon)))
        assert wait_for(
            lambda: "vectors for generation 1 ready: 6 blocks, 4 encoded" in daemon.full_log()
        )
        assert _paths(daemon, MEANING)[0] == "retries"
        assert _paths(daemon, "Zwischenspeicher Festplatte")[0] == "de/zwischenspeicher"


def test_another_trees_file_under_the_served_generations_number_is_completed(tmp_path):
    """A vector file copied from another tree (as the suite seeds one commit's from
    another's) has the served generation's number but not all of its blocks: the missing
    ones are encoded, the rest kept."""
    _model_or_skip()
    env = {"SCRIPTORIUM_SEMANTIC": "on"}
    trees = {"older": PAGES, "newer": {**PAGES, "pool.md": PAGES["pool.md"] + EXTRA}}
    states = {}
    for name, pages in trees.items():
        docs = write_tree(tmp_path / name / "docs", pages)
        config = markdown_config(tmp_path / name / "config.toml", {"docs": docs})
        states[name] = (config, tmp_path / name / "state")
    config, state = states["older"]
    with running(["--config", str(config)], state, env=env) as older:
        assert wait_for(lambda: _vectors(older)[0].vectors_state == "ready")
    config, state = states["newer"]
    with running(["--config", str(config)], state, env={"SCRIPTORIUM_SEMANTIC": "off"}):
        pass  # its generation 1, without vectors
    shutil.copytree(states["older"][1] / "vectors", state / "vectors")
    with running(["--config", str(config)], state, env=env) as newer:
        assert wait_for(lambda: _vectors(newer)[0].vectors_state == "ready")
        assert _paths(newer, "idle connections closed")[0] == "pool"
        log = newer.full_log()
    assert "its file on disk" not in log
    (found,) = re.findall(r"(\d+) blocks, (\d+) encoded", log)
    assert found == ("4", "1"), log


CODE = {
    f"client/part_{i}.py": f'def step_{i}(value):\n    """Step {i} of the client."""\n'
    f"    return value + {i}\n"
    for i in range(12)
}


def test_docs_vectors_serve_while_the_code_is_encoded(tmp_path):
    """A first pass encodes the docs first and serves their vectors at once: a question
    about the docs finds its answer by meaning while the code's vectors are still made."""
    _model_or_skip()
    docs = write_tree(tmp_path / "docs", PAGES)
    code = write_tree(tmp_path / "code", CODE)
    config = docs_and_code_config(tmp_path / "config.toml", docs, code)
    release = tmp_path / "release-code"
    env = {"SCRIPTORIUM_SEMANTIC": "on", "SCRIPTORIUM_FAULT_PAUSE": f"vectors.corpus={release}"}
    with running(["--config", str(config)], tmp_path / "state", env=env) as daemon:
        assert wait_for(lambda: times_reached(release) >= 1)
        by_name = {source.name: source for source in _vectors(daemon)}
        assert by_name["docs"].vectors_done == by_name["docs"].vectors_total == 4
        assert by_name["code"].vectors_done < by_name["code"].vectors_total
        assert by_name["docs"].vectors_state == "ready"
        assert by_name["code"].vectors_state == "encoding"
        request = pb.SearchRequest(query=MEANING, top_k=5, kinds=[pb.CORPUS_DOCS], explain=True)
        first = daemon.stub.Search(request, timeout=30).results[0]
        assert first.location.split("#")[0] == "retries"
        assert first.scores.dense > 0.5
        assert "serve for docs (4 blocks) while the rest are encoded" in daemon.full_log()
        assert not list((tmp_path / "state" / "vectors").rglob("gen-*.vec"))
        release.touch()
        assert wait_for(lambda: all(s.vectors_state == "ready" for s in _vectors(daemon)))
        by_name = {source.name: source for source in _vectors(daemon)}
        assert by_name["code"].vectors_done == by_name["code"].vectors_total == 12
    assert list((tmp_path / "state" / "vectors").rglob("gen-*.vec"))


@pytest.mark.parametrize("which", ["all", "off"])
def test_a_question_about_using_a_name_reads_the_meaning(tmp_path, which):
    """A sentence about using a name ("use Backoff for …") is a question to the retriever,
    not a lookup by that name: the page whose meaning answers it is found though neither
    the name nor the other words are in it; ranked as a lookup, nothing is."""
    _model_or_skip()
    docs = write_tree(tmp_path / "docs", PAGES)
    config = markdown_config(tmp_path / "config.toml", {"docs": docs})
    config.write_text(config.read_text() + f'\n[ranking]\nsemantic_usage_questions = "{which}"\n')
    env = {"SCRIPTORIUM_SEMANTIC": "on"}
    with running(["--config", str(config)], tmp_path / "state", env=env) as daemon:
        assert wait_for(lambda: _vectors(daemon)[0].vectors_state == "ready")
        found = _paths(daemon, f"use Backoff for an {MEANING}")
        if which == "all":
            assert found[:1] == ["retries"], found
        else:
            assert found == [], found


# A section whose first 256 tokens are about something else, and whose last lines answer
# MEANING: one block (no heading inside it), longer than the encoder's first reading.
LONG_SECTION = (
    "# Client settings\n\n"
    + "The log format prints the timestamp, the level and the logger's name on each line, "
    "and colours the level when the output is a terminal. "
    * 9
    + "Headers are written in lower case, and a header given twice keeps both values in the "
    "order they were set. "
    * 5
    + "\n\nWhen a request fails because the network dropped, the client tries again up to "
    "three times, waiting longer each time.\n"
)


@pytest.mark.parametrize("long_tokens", [512, 0])
def test_a_long_sections_later_text_is_read(tmp_path, long_tokens):
    """A section longer than the first reading is read again up to semantic_long_tokens:
    a question answered only by its last lines finds it. Read once, it is not first."""
    _model_or_skip()
    pages = {name: text for name, text in PAGES.items() if name != "retries.md"}
    docs = write_tree(tmp_path / "docs", {**pages, "settings.md": LONG_SECTION})
    config = markdown_config(tmp_path / "config.toml", {"docs": docs})
    config.write_text(config.read_text() + f"\n[ranking]\nsemantic_long_tokens = {long_tokens}\n")
    env = {"SCRIPTORIUM_SEMANTIC": "on"}
    with running(["--config", str(config)], tmp_path / "state", env=env) as daemon:
        assert wait_for(lambda: _vectors(daemon)[0].vectors_state == "ready")
        found = _paths(daemon, MEANING)
        assert found, "the retriever answers a question none of whose words a page holds"
        if long_tokens:
            assert found[0] == "settings", found
        else:
            assert found[0] != "settings", found
        folders = [p.name for p in (tmp_path / "state" / "vectors").iterdir()]
        assert folders == [
            "bge-small-en-v1.5-256-512-alone" if long_tokens else "bge-small-en-v1.5-256-alone"
        ]


def test_turned_off(tmp_path):
    docs = write_tree(tmp_path / "docs", PAGES)
    config = markdown_config(tmp_path / "config.toml", {"docs": docs})
    config.write_text(config.read_text() + "\n[ranking]\nsemantic = false\n")
    with running(
        ["--config", str(config)], tmp_path / "state", env={"SCRIPTORIUM_SEMANTIC": "on"}
    ) as daemon:
        (source,) = _vectors(daemon)
        assert source.vectors_state == "off"
        assert _paths(daemon, MEANING) == []
        assert not (tmp_path / "state" / "vectors").exists()


def test_an_edited_page_gets_its_vector_without_encoding_the_rest(tmp_path):
    _model_or_skip()
    docs = write_tree(tmp_path / "docs", PAGES)
    config = markdown_config(tmp_path / "config.toml", {"docs": docs}, server="watch = true")
    with running(
        ["--config", str(config)], tmp_path / "state", env={"SCRIPTORIUM_SEMANTIC": "on"}
    ) as daemon:
        assert wait_for(lambda: _vectors(daemon)[0].vectors_state == "ready")
        served = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=10).generation
        write_tree(
            docs,
            {
                "offline.md": "# Working without a network\n\nQueue the calls "
                "while the laptop has no signal and send them when it is back.\n"
            },
        )
        query = "airplane mode"

        def caught_up() -> bool:
            (source,) = _vectors(daemon)
            listed = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=10)
            return (
                listed.generation > served
                and source.vectors_state == "ready"
                and (source.vectors_done == source.vectors_total == 5)
            )

        assert wait_for(caught_up)
        assert _paths(daemon, query)[0] == "offline"
        assert "5 blocks, 1 encoded" in daemon.full_log()


QUESTIONS = [
    "how do I send data in the body of a request",
    "run something after the response was returned",
    "only let logged in users reach an endpoint",
    "check that a number sent by the client is within limits",
    "When I declare a dependency with yield that opens a database session and raise an "
    "error inside the handler, the code after the yield runs but the response is already "
    "sent. How do I close the session after the work finished?",
]
EDITED = (
    "\n\nAn older note: the handler reads the body, checks the token from the header and "
    "returns the model, and the client retries when the network drops.\n"
)


def _ranked_with_meaning(daemon) -> dict[str, list[tuple]]:
    answers = {}
    for question in QUESTIONS:
        response = daemon.stub.Search(
            pb.SearchRequest(query=question, top_k=15, explain=True), timeout=60
        )
        answers[question] = [
            (r.ref_id, r.location, r.score, r.scores.lexical, r.scores.dense)
            for r in response.results
        ]
    return answers


def test_a_tree_reached_by_edits_has_the_vectors_of_its_fresh_build(tmp_path):
    """Vectors encoded for the edited blocks alone equal those a fresh build encodes among
    all the others, so the caught-up daemon ranks exactly as the fresh one."""
    _model_or_skip()
    from tests.support.daemon import CORPUS

    pages = sorted((CORPUS / "docs/en/docs/tutorial").glob("*.md"))[:24]
    tree = {page.name: page.read_text("utf-8") for page in pages}
    docs = write_tree(tmp_path / "docs", tree)
    config = markdown_config(tmp_path / "config.toml", {"docs": docs})
    env = {"SCRIPTORIUM_SEMANTIC": "on"}

    def ready(daemon) -> bool:
        (source,) = _vectors(daemon)
        return source.vectors_state == "ready" and source.vectors_done == source.vectors_total

    edited = sorted(tree)[::3]
    write_tree(docs, {name: tree[name] + EDITED for name in edited})  # the older tree
    state = tmp_path / "state"
    with running(["--config", str(config)], state, env=env) as older:
        assert wait_for(lambda: ready(older))
    write_tree(docs, {name: tree[name] for name in edited})  # the tree as it is now
    with running(["--config", str(config)], state, env=env) as updated:
        updated.wait_caught_up()
        assert wait_for(lambda: ready(updated))
        caught_up = _ranked_with_meaning(updated)
        log = updated.full_log()
    found = re.findall(r"(\d+) blocks, (\d+) encoded, (\d+) of their passage's vector", log)
    total, encoded, by_text = map(int, found[-1])
    # Only the edited passages were encoded again: the edited pages' other blocks have new
    # ids (their page changed) and took the vector their unchanged passage already had.
    assert 0 < encoded < len(edited) * 2 and by_text > encoded, log
    assert total > 100
    with running(["--config", str(config)], tmp_path / "fresh", env=env) as fresh:
        assert wait_for(lambda: ready(fresh))
        built = _ranked_with_meaning(fresh)
    # The cosine takes part in every answer compared.
    assert all(any(hit[4] > 0 for hit in built[q]) for q in QUESTIONS)
    differing = [q for q in QUESTIONS if caught_up[q] != built[q]]
    assert not differing, differing


def test_a_query_being_encoded_leaves_the_daemon_answering(tmp_path):
    """A question's vector is made away from the event loop: while one is encoded (held here),
    the daemon answers health checks and searches that need no vector."""
    _model_or_skip()
    docs = write_tree(tmp_path / "docs", PAGES)
    config = markdown_config(tmp_path / "config.toml", {"docs": docs})
    release = tmp_path / "release-query"
    env = {"SCRIPTORIUM_SEMANTIC": "on", "SCRIPTORIUM_FAULT_PAUSE": f"semantic.query={release}"}
    with running(["--config", str(config)], tmp_path / "state", env=env) as daemon:
        assert wait_for(lambda: _vectors(daemon)[0].vectors_state == "ready")
        held = daemon.stub.Search.future(pb.SearchRequest(query=MEANING, top_k=5), timeout=600)
        assert wait_for(lambda: times_reached(release) >= 1, 60)
        status = daemon.health.Check(health_pb2.HealthCheckRequest(), timeout=30).status
        assert status == health_pb2.HealthCheckResponse.SERVING
        # A lookup by name reads no vector: it is answered while the other call waits.
        assert _paths(daemon, "`pool`")[0] == "pool"
        assert not held.done()
        release.touch()
        assert held.result(60).results[0].location.split("#")[0] == "retries"
