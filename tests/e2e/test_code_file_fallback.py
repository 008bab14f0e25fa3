"""A code file found by its path alone comes back as a whole-file ref anchored at line 1."""

from __future__ import annotations

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running


def test_path_match_without_a_matching_line_is_a_file_level_result(tmp_path):
    tree = tmp_path / "repo"
    (tree / "payments").mkdir(parents=True)
    (tree / "payments" / "stripe_webhook.py").write_text(
        "def handle(event):\n    return event.id\n\n\ndef verify(signature, body):\n"
        "    return bool(signature and body)\n",
        encoding="utf-8",
    )
    (tree / "payments" / "ledger.py").write_text(
        "def post(entry):\n    # record a stripe charge in the ledger\n    return entry\n",
        encoding="utf-8",
    )
    with running([str(tree)], tmp_path / "state") as daemon:
        stub = daemon.stub
        results = stub.Search(
            pb.SearchRequest(query="stripe webhook", kinds=[pb.CORPUS_CODE], explain=True)
        ).results
        by_location = {r.location: r for r in results}
        webhook = by_location["payments/stripe_webhook.py"]
        assert webhook.kind == pb.REF_KIND_FILE
        assert webhook.start_line == 1 and webhook.anchor_line == 1
        assert "file-level" in {r.name for r in webhook.reasons}
        assert list(by_location).count("payments/stripe_webhook.py") == 1
        # A file whose lines match stays a line-anchored code ref.
        ledger = next(r for r in results if r.location.startswith("payments/ledger.py"))
        assert ledger.kind == pb.REF_KIND_CODE and ledger.anchor_line == 2
        assert ledger.location.endswith("#L1-L3")  # the definition's lines
        whole = stub.GetContent(pb.GetContentRequest(ref_id=webhook.ref_id))
        assert whole.kind == pb.REF_KIND_FILE and whole.content.startswith("def handle(event):")
