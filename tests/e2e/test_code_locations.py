"""Code locations through a real daemon: a definition by name (``path#Class.method``, a Python
module path), exact lines (``path#L10-L20``), definition-sized snippets, the DEFINITION mode,
and search results whose location is their definition's lines.

The tree is a copy of the FastAPI corpus's Python package plus a small TypeScript file written
here, so a second language goes through the same rules.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from scriptorium.grpc.status import resolution_from_error
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, Daemon, running
from tests.support.trees import write

OAUTH2 = "fastapi/security/oauth2.py"
TS = "web/client.ts"
# Long enough (more than a 40-line snippet budget) that a snippet inside it is a window.
_BACKOFF_STEPS = "\n".join(f"  delay = delay * 2 + {i}; // step {i}" for i in range(45))
CLIENT_TS = f"""\
// A small HTTP client: a class, an interface, a long function and module-level wiring.
import {{ request }} from "./transport";

export interface Options {{
  baseUrl: string;
  retries: number;
}}

export class ApiClient {{
  private readonly options: Options;

  constructor(options: Options) {{
    this.options = options;
  }}

  async get(path: string): Promise<string> {{
    const url = this.options.baseUrl + path;
    return request("GET", url, this.options.retries);
  }}

  close(): void {{
    this.options.retries = 0;
  }}
}}

export class Pool {{
  close(): void {{
    return;
  }}
}}

export function backoff(attempt: number): number {{
  let delay = attempt;
{_BACKOFF_STEPS}
  return delay;
}}

export const defaultClient = new ApiClient({{ baseUrl: "/", retries: 3 }});
const registry = new Map<string, ApiClient>();
registry.set("default", defaultClient);
"""


@pytest.fixture(scope="module")
def tree(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("code-locations") / "repo"
    shutil.copytree(CORPUS / "fastapi", root / "fastapi")
    write(root / TS, CLIENT_TS)
    return root


@pytest.fixture(scope="module")
def daemon(tree: Path) -> Iterator[Daemon]:
    with running([str(tree), "--no-watch"], tree.parent / "state") as served:
        yield served


@pytest.fixture(scope="module")
def stub(daemon: Daemon):
    return daemon.stub


def fetch(stub, location: str = "", mode=pb.CONTENT_MODE_SNIPPET, **kw) -> pb.GetContentResponse:
    return stub.GetContent(pb.GetContentRequest(location=location, mode=mode, **kw), timeout=30)


def failure(stub, location: str, mode=pb.CONTENT_MODE_SNIPPET) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        fetch(stub, location, mode)
    return err.value


def file_lines(tree: Path, path: str) -> list[str]:
    return (tree / path).read_text(encoding="utf-8").splitlines()


def line_of(lines: list[str], pattern: str, after: int = 0) -> int:
    """The 1-based number of the first line at or after ``after`` matching ``pattern``."""
    return next(i for i, line in enumerate(lines, 1) if i >= after and re.search(pattern, line))


def span(lines: list[str], first: int, last: int) -> str:
    return "\n".join(lines[first - 1 : last])


# -- definitions by name -------------------------------------------------------------------------


def _bearer_call(lines: list[str]) -> tuple[int, int, int]:
    """The class line of OAuth2PasswordBearer and the first and last line of its __call__."""
    cls = line_of(lines, r"^class OAuth2PasswordBearer\(")
    start = line_of(lines, r"^    async def __call__", cls)
    end = line_of(lines, r"^        return param$", start)
    return cls, start, end


def test_a_method_location_returns_exactly_its_definition(stub, tree):
    lines = file_lines(tree, OAUTH2)
    _, start, end = _bearer_call(lines)
    reply = fetch(stub, f"{OAUTH2}#OAuth2PasswordBearer.__call__")
    assert (reply.start_line, reply.end_line) == (start, end)
    assert reply.content == span(lines, start, end)
    assert reply.scope == "definition"
    assert reply.symbol == "OAuth2PasswordBearer.__call__"
    assert reply.kind == pb.REF_KIND_CODE
    assert reply.total_lines == len(lines)
    assert reply.resolution.reason == "resolved" and reply.resolution.rule == "exact"
    assert reply.location == f"{OAUTH2}#OAuth2PasswordBearer.__call__"
    # The ref it hands back fetches the same definition.
    again = stub.GetContent(pb.GetContentRequest(ref_id=reply.ref_id), timeout=30)
    assert again.content == reply.content


def test_a_definition_block_includes_its_decorators(stub, tree):
    path = "fastapi/datastructures.py"
    lines = file_lines(tree, path)
    decorator = line_of(lines, r"^    @classmethod")
    end = line_of(lines, r"return cast\(UploadFile", decorator)
    reply = fetch(stub, f"{path}#UploadFile._validate")
    assert reply.content.splitlines()[0] == "    @classmethod"
    assert (reply.start_line, reply.end_line) == (decorator, end)


def test_a_class_location_returns_the_class_with_its_methods(stub, tree):
    lines = file_lines(tree, OAUTH2)
    cls, _, end = _bearer_call(lines)
    reply = fetch(stub, f"{OAUTH2}#OAuth2PasswordBearer")
    assert reply.start_line == cls and reply.end_line == end
    assert reply.content.startswith("class OAuth2PasswordBearer(OAuth2):")
    assert reply.symbol == "OAuth2PasswordBearer"


def test_other_spellings_of_a_name_resolve_by_the_variant_rule(stub, tree):
    exact = fetch(stub, f"{OAUTH2}#OAuth2PasswordBearer")
    by_case = fetch(stub, f"{OAUTH2}#oauth2passwordbearer")
    assert by_case.resolution.rule == "variant"
    assert by_case.content == exact.content
    ts = fetch(stub, f"{TS}#get")  # the last segment names one definition: ApiClient.get
    assert ts.resolution.rule == "variant" and ts.symbol == "ApiClient.get"
    assert ts.content.lstrip().startswith("async get(path: string)")


def test_a_name_several_definitions_share_is_ambiguous_with_fetchable_candidates(stub):
    for location, expected in [
        (f"{OAUTH2}#__call__", f"{OAUTH2}#OAuth2PasswordBearer.__call__"),
        (f"{TS}#close", f"{TS}#Pool.close"),
    ]:
        err = failure(stub, location)
        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, err.details()
        resolution = resolution_from_error(err)
        assert resolution.reason == "ambiguous"
        assert resolution.requested_location == location
        assert expected in resolution.candidates
        for candidate in resolution.candidates:
            assert fetch(stub, candidate).resolution.rule == "exact", candidate


def test_an_unknown_name_is_not_found_with_the_closest_names(stub):
    err = failure(stub, f"{OAUTH2}#OAuth2PasswordBarer")
    assert err.code() == grpc.StatusCode.NOT_FOUND
    resolution = resolution_from_error(err)
    assert resolution.reason == "not_found"
    assert f"{OAUTH2}#OAuth2PasswordBearer" in resolution.candidates
    err = failure(stub, f"{TS}#ApiClinet")
    assert f"{TS}#ApiClient" in resolution_from_error(err).candidates


def test_a_python_module_path_names_a_definition_or_a_module(stub, tree):
    by_path = fetch(stub, f"{OAUTH2}#OAuth2PasswordBearer.__call__")
    by_module = fetch(stub, "fastapi.security.oauth2.OAuth2PasswordBearer.__call__")
    assert by_module.content == by_path.content
    assert by_module.location == by_path.location
    assert by_module.resolution.reason == "resolved" and by_module.resolution.rule == "exact"
    # Its trailing packages name one file too (a src/ layout imports it so).
    by_tail = fetch(stub, "security.oauth2.OAuth2PasswordBearer.__call__")
    assert by_tail.content == by_path.content
    assert by_tail.resolution.rule == "canonical-leaf"
    package = fetch(stub, "fastapi.security")
    assert package.location == "fastapi/security/__init__.py"
    assert package.content == (tree / "fastapi/security/__init__.py").read_text("utf-8").rstrip(
        "\n"
    )
    assert package.scope == "file"
    err = failure(stub, "fastapi.security.oauth2.NoSuchThing")
    assert err.code() == grpc.StatusCode.NOT_FOUND


# -- exact lines ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [OAUTH2, TS])
def test_line_locations_return_exactly_those_lines(stub, tree, path):
    lines = file_lines(tree, path)
    one = fetch(stub, f"{path}#L10")
    assert one.content == lines[9] and (one.start_line, one.end_line) == (10, 10)
    assert one.scope == "lines"
    some = fetch(stub, f"{path}#L10-L20")
    assert some.content == span(lines, 10, 20) and (some.start_line, some.end_line) == (10, 20)
    assert some.location == f"{path}#L10-L20"
    # FULL of a line range is still those lines: the range is what was asked for.
    full = fetch(stub, f"{path}#L10-L20", pb.CONTENT_MODE_FULL)
    assert full.content == some.content
    # A place as compilers, linters and test runners print it is that line.
    for printed in (f"{path}:10", f"{path}:10:5", f"{path}:10:5:"):
        place = fetch(stub, printed)
        assert place.content == one.content and place.location == f"{path}#L10", printed
    clamped = fetch(stub, f"{path}#L{len(lines) - 2}-L{len(lines) + 50}")
    assert clamped.end_line == len(lines) and clamped.total_lines == len(lines)
    assert clamped.content == span(lines, len(lines) - 2, len(lines))


@pytest.mark.parametrize("fragment", ["L0", "L0-L5", "L20-L10"])
def test_a_zero_or_reversed_line_range_is_invalid(stub, fragment):
    err = failure(stub, f"{OAUTH2}#{fragment}")
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in err.details() and ("line 0" in err.details() or "reversed" in err.details())


def test_lines_past_the_end_are_not_found(stub, tree):
    total = len(file_lines(tree, TS))
    err = failure(stub, f"{TS}#L{total + 1}-L{total + 5}")
    assert err.code() == grpc.StatusCode.NOT_FOUND
    assert str(total) in resolution_from_error(err).detail


# -- snippets of code refs, FULL and DEFINITION ---------------------------------------------------


def _ref_at(stub, path: str, line: int) -> str:
    return fetch(stub, f"{path}#L{line}").ref_id


def test_a_snippet_is_the_definition_the_anchor_sits_in(stub, tree):
    lines = file_lines(tree, TS)
    start = line_of(lines, r"^  async get\(")
    end = line_of(lines, r"^  }$", start)
    reply = stub.GetContent(pb.GetContentRequest(ref_id=_ref_at(stub, TS, start + 1)), timeout=30)
    assert (reply.start_line, reply.end_line) == (start, end)
    assert reply.content == span(lines, start, end)
    assert not reply.truncated
    assert reply.scope == "definition" and reply.symbol == "ApiClient.get"
    py = file_lines(tree, OAUTH2)
    _, call_start, call_end = _bearer_call(py)
    by_ref = stub.GetContent(
        pb.GetContentRequest(ref_id=_ref_at(stub, OAUTH2, call_start + 3)), timeout=30
    )
    assert (by_ref.start_line, by_ref.end_line) == (call_start, call_end)


def test_a_snippet_of_a_long_definition_is_a_window_inside_it(stub, tree):
    lines = file_lines(tree, TS)
    start = line_of(lines, r"^export function backoff")
    end = line_of(lines, r"^}$", start)
    anchor = start + 3
    reply = stub.GetContent(pb.GetContentRequest(ref_id=_ref_at(stub, TS, anchor)), timeout=30)
    assert start <= reply.start_line <= anchor <= reply.end_line <= end
    assert reply.end_line - reply.start_line + 1 == 40
    assert reply.content == span(lines, reply.start_line, reply.end_line)
    assert reply.truncated
    assert reply.scope == "window" and reply.symbol == "backoff"


def test_a_snippet_outside_every_definition_never_starts_inside_the_previous_one(stub, tree):
    lines = file_lines(tree, TS)
    backoff_end = line_of(lines, r"^}$", line_of(lines, r"^export function backoff"))
    anchor = line_of(lines, r"^registry\.set")
    reply = stub.GetContent(pb.GetContentRequest(ref_id=_ref_at(stub, TS, anchor)), timeout=30)
    assert backoff_end < reply.start_line <= anchor <= reply.end_line
    assert reply.content.splitlines()[0].startswith("export const defaultClient")
    assert reply.scope == "window"


def test_full_of_a_code_ref_is_the_whole_file_and_says_so(stub, tree):
    lines = file_lines(tree, OAUTH2)
    _, start, _ = _bearer_call(lines)
    ref_id = _ref_at(stub, OAUTH2, start)
    reply = stub.GetContent(pb.GetContentRequest(ref_id=ref_id, mode=pb.CONTENT_MODE_FULL))
    assert reply.scope == "file"
    assert reply.content == "\n".join(lines)
    assert (reply.start_line, reply.end_line) == (1, len(lines))
    assert reply.symbol == "OAuth2PasswordBearer.__call__"


def test_definition_mode_adds_the_enclosing_signatures(stub, tree):
    py = file_lines(tree, OAUTH2)
    cls, start, end = _bearer_call(py)
    for request in [
        pb.GetContentRequest(ref_id=_ref_at(stub, OAUTH2, start + 2)),
        pb.GetContentRequest(location=f"{OAUTH2}#L{start + 2}"),
        pb.GetContentRequest(location=f"{OAUTH2}#OAuth2PasswordBearer.__call__"),
        pb.GetContentRequest(location="fastapi.security.oauth2.OAuth2PasswordBearer.__call__"),
    ]:
        request.mode = pb.CONTENT_MODE_DEFINITION
        reply = stub.GetContent(request, timeout=30)
        assert reply.scope == "definition", request
        assert reply.content == "\n".join([py[cls - 1], span(py, start, end)])
        assert (reply.start_line, reply.end_line) == (start, end)
        assert [(r.start_line, r.end_line, r.reason) for r in reply.context] == [
            (cls, cls, "OAuth2PasswordBearer")
        ]
    ts = file_lines(tree, TS)
    method = line_of(ts, r"^  async get\(")
    reply = fetch(stub, f"{TS}#ApiClient.get", pb.CONTENT_MODE_DEFINITION)
    assert reply.content.splitlines()[:2] == ["export class ApiClient {", ts[method - 1]]
    assert [(r.start_line, r.reason) for r in reply.context] == [
        (line_of(ts, r"^export class ApiClient"), "ApiClient")
    ]


# -- search results carry their definition's range -----------------------------------------------


def test_a_code_search_result_location_is_its_definition_range(stub, tree):
    results = stub.Search(
        pb.SearchRequest(query="OAuth2PasswordBearer", kinds=[pb.CORPUS_CODE]), timeout=30
    ).results
    top = next(r for r in results if r.title == "OAuth2PasswordBearer")
    assert top.location == f"{OAUTH2}#L{top.start_line}-L{top.end_line}"
    reply = fetch(stub, top.location)
    lines = file_lines(tree, OAUTH2)
    assert reply.content == span(lines, top.start_line, top.end_line)
    assert reply.content.startswith("class OAuth2PasswordBearer(OAuth2):")
    ts = stub.Search(pb.SearchRequest(query="backoff delay", kinds=[pb.CORPUS_CODE])).results
    backoff = next(r for r in ts if r.title == "backoff")
    assert backoff.location == f"{TS}#L{backoff.start_line}-L{backoff.end_line}"
    assert fetch(stub, backoff.location).content.startswith("export function backoff")


# -- the Python client and the CLI ----------------------------------------------------------------


def test_the_python_client_takes_the_definition_mode_by_name(daemon, tree):
    from scriptorium.client import Client

    py = file_lines(tree, OAUTH2)
    cls, start, end = _bearer_call(py)
    with Client(daemon.address) as client:
        reply = client.get_content(
            location="fastapi.security.oauth2.OAuth2PasswordBearer.__call__", mode="definition"
        )
    assert reply.content == "\n".join([py[cls - 1], span(py, start, end)])
    assert reply.scope == "definition"
    assert [r.start_line for r in reply.context] == [cls]


def test_the_cli_fetches_a_definition_and_says_what_it_returned(daemon, tree):
    py = file_lines(tree, OAUTH2)
    cls, start, end = _bearer_call(py)
    location = f"{OAUTH2}#OAuth2PasswordBearer.__call__"
    args = ["get", location, "--mode", "definition", "--target", daemon.address]
    done = subprocess.run(
        [sys.executable, "-m", "scriptorium", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "\n".join([py[cls - 1], span(py, start, end)]) + "\n"
    header = done.stderr.splitlines()
    assert header[0].startswith(f"{location}  (lines {start}-{end} of {len(py)})")
    assert "definition OAuth2PasswordBearer.__call__" in header[0]
    assert f"  line {cls}: signature of OAuth2PasswordBearer (above)" in header
