"""The OpenAPI description follows the proto: every RPC, every field, under the JSON mapping.

The document is built from the descriptors when served, so there is no committed copy to go
stale; these tests show it covers the live contract and that it follows an edited one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FieldDescriptor

from scriptorium.http.openapi import openapi_document
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.contract import edited_contract

SERVICE = pb.DESCRIPTOR.services_by_name["RetrievalService"]


def _messages(descriptor, seen=None):
    seen = {} if seen is None else seen
    if descriptor.full_name in seen or descriptor.full_name.startswith("google.protobuf."):
        return seen
    seen[descriptor.full_name] = descriptor
    for field in descriptor.fields:
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            _messages(field.message_type, seen)
    return seen


def test_every_rpc_is_a_post_path_with_its_request_and_response():
    doc = openapi_document()
    for method in SERVICE.methods:
        post = doc["paths"][f"/v1/{method.name}"]["post"]
        request = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        response = post["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        assert request.endswith(method.input_type.full_name)
        assert response.endswith(method.output_type.full_name)
        assert post["responses"]["404"]["content"]["application/json"]["schema"]["$ref"].endswith(
            "/Error"
        )
    assert {"/v1/search", "/v1/content", "/healthz", "/readyz"} <= set(doc["paths"])


def test_every_field_of_every_message_is_described_by_its_json_name():
    schemas = openapi_document()["components"]["schemas"]
    messages = {}
    for method in SERVICE.methods:
        _messages(method.input_type, messages)
        _messages(method.output_type, messages)
    for name, descriptor in messages.items():
        properties = schemas[name]["properties"]
        assert set(properties) == {f.json_name for f in descriptor.fields}, name
    search = schemas["scriptorium.v1.SearchRequest"]["properties"]
    assert search["topK"]["type"] == "integer"
    assert search["kinds"]["items"]["$ref"].endswith("scriptorium.v1.Corpus")
    assert search["asOf"] == {"type": "string", "format": "date-time"}
    status = schemas["scriptorium.v1.SourceStatus"]["properties"]
    assert "string" in status["documentCount"]["type"]  # int64 is a string in proto3 JSON
    corpus = schemas["scriptorium.v1.Corpus"]["enum"]
    assert "CORPUS_DOCS" in corpus and 1 in corpus


def test_the_get_forms_take_the_request_fields_as_parameters():
    doc = openapi_document()
    names = {p["name"] for p in doc["paths"]["/v1/search"]["get"]["parameters"]}
    assert names == {"q"} | {f.name for f in pb.SearchRequest.DESCRIPTOR.fields} - {"query"}


def _compiled_service(proto_root: Path, out: Path):
    subprocess.run(
        [
            sys.executable, "-m", "grpc_tools.protoc", f"-I{proto_root}",
            f"--descriptor_set_out={out}", "--include_imports", "--include_source_info",
            "scriptorium/v1/retrieval.proto",
        ],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    source = next(f for f in files.file if f.name == "scriptorium/v1/retrieval.proto")
    return pool.FindServiceByName("scriptorium.v1.RetrievalService"), source


def test_the_description_follows_an_edited_contract(tmp_path):
    root = edited_contract(
        tmp_path,
        "  bool explain = 10;\n",
        "  bool explain = 10;\n  // How the answer should taste.\n  string flavour_name = 101;\n",
    )
    service, source = _compiled_service(root, tmp_path / "set.pb")
    doc = openapi_document(service, source)
    field = doc["components"]["schemas"]["scriptorium.v1.SearchRequest"]["properties"][
        "flavourName"
    ]
    assert field == {"type": "string", "description": "How the answer should taste."}
    assert (
        "flavourName"
        not in openapi_document()["components"]["schemas"]["scriptorium.v1.SearchRequest"][
            "properties"
        ]
    )
