"""The calls end-to-end tests make through the generated stubs, written once.

Each takes a ``RetrievalServiceStub`` and a generous deadline: it bounds a broken daemon,
never measures one.
"""

from __future__ import annotations

from scriptorium.v1 import retrieval_pb2 as pb

CALL_TIMEOUT = 30.0


def search(stub, query: str, *, timeout: float = CALL_TIMEOUT, **fields) -> pb.SearchResponse:
    """Search for ``query``; ``fields`` are the request's other fields (``top_k``, ``kinds``...)."""
    return stub.Search(pb.SearchRequest(query=query, **fields), timeout=timeout)


def content(stub, location: str, *, timeout: float = CALL_TIMEOUT) -> pb.GetContentResponse:
    """The whole of what ``location`` names (GetContent in full mode)."""
    request = pb.GetContentRequest(location=location, mode=pb.CONTENT_MODE_FULL)
    return stub.GetContent(request, timeout=timeout)
