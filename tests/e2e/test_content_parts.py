"""GetContent in parts (max_chars and cursors) and the OUTLINE mode, through a real daemon.

The tree holds real FastAPI files: the release notes (a page of about 700 KB), the async page,
and fastapi/routing.py as a second, code corpus.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import grpc
import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, running
from tests.support.trees import docs_and_code_config

WHOLE = 50_000  # max_lines large enough for any file of the tree


def _tree(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True)
    for page in ("release-notes.md", "async.md"):
        shutil.copy(CORPUS / "docs/en/docs" / page, docs / page)
    (root / "code/fastapi").mkdir(parents=True)
    shutil.copy(CORPUS / "fastapi/routing.py", root / "code/fastapi/routing.py")
    return docs_and_code_config(root / "scriptorium.toml", docs, root / "code")


@pytest.fixture(scope="module")
def tree(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tree(tmp_path_factory.mktemp("parts"))


@pytest.fixture(scope="module")
def daemon(tree: Path, tmp_path_factory: pytest.TempPathFactory):
    with running(["--config", str(tree)], tmp_path_factory.mktemp("state")) as started:
        yield started


def _parts(stub, location: str, max_chars: int, mode: int) -> list[pb.GetContentResponse]:
    parts = [
        stub.GetContent(pb.GetContentRequest(location=location, mode=mode, max_chars=max_chars))
    ]
    while parts[-1].next_cursor:
        request = pb.GetContentRequest(
            location=location, mode=mode, max_chars=max_chars, cursor=parts[-1].next_cursor
        )
        parts.append(stub.GetContent(request))
        assert len(parts) < 1000, "the cursors do not advance"
    return parts


@pytest.mark.parametrize(
    ("location", "max_chars"), [("release-notes", 20_000), ("fastapi/routing.py", 3_000)]
)
def test_parts_reassemble_to_the_full_answer_each_within_max_chars(daemon, location, max_chars):
    stub = daemon.stub
    full = stub.GetContent(
        pb.GetContentRequest(location=location, mode=pb.CONTENT_MODE_FULL, max_lines=WHOLE)
    )
    assert not full.truncated and len(full.content) > 3 * max_chars
    parts = _parts(stub, location, max_chars, pb.CONTENT_MODE_FULL)
    assert "".join(p.content for p in parts) == full.content
    count = len(parts)
    assert count > 3
    previous_end = full.start_line - 1
    for number, part in enumerate(parts, start=1):
        assert 0 < len(part.content) <= max_chars
        assert part.total_chars == len(full.content)
        assert part.doc_version == full.doc_version
        assert (part.part.number, part.part.count) == (number, count)
        assert part.part.end_char - part.part.start_char == len(part.content)
        assert (part.part.whole_start_line, part.part.whole_end_line) == (
            full.start_line,
            full.end_line,
        )
        # Every part ends on a line boundary and starts on the line after the previous part.
        assert part.start_line == previous_end + 1
        previous_end = part.end_line
        if number < count:
            assert part.content.endswith("\n") and part.next_cursor
            assert part.end_line - part.start_line + 1 == part.content.count("\n")
        else:
            assert part.next_cursor == "" and part.end_line == full.end_line
        assert 0 < part.tokens_used <= len(part.content)
    assert previous_end == full.end_line


def test_parts_end_before_a_heading_when_one_is_near(daemon):
    max_chars = 20_000
    parts = _parts(daemon.stub, "release-notes", max_chars, pb.CONTENT_MODE_FULL)
    whole = "".join(p.content for p in parts)
    at_heading = 0
    for previous, part in itertools.pairwise(parts):
        if part.content.startswith("#"):
            at_heading += 1
            continue
        # No heading started in the last fifth of the window the previous part was cut from.
        window = whole[
            previous.part.start_char + max_chars * 4 // 5 : previous.part.start_char + max_chars
        ]
        assert "\n#" not in window, part.content[:60]
    assert at_heading > len(parts) // 2
    # The part cut there is shorter than the cap by less than a fifth of it.
    assert all(len(p.content) > max_chars * 4 // 5 for p in parts[:-1])


def test_an_unparted_answer_reports_its_size(daemon):
    reply = daemon.stub.GetContent(
        pb.GetContentRequest(location="async", mode=pb.CONTENT_MODE_FULL)
    )
    assert reply.total_chars == len(reply.content) > 0
    assert not reply.HasField("part") and reply.next_cursor == ""


def _code(call) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as info:
        call()
    assert "Traceback" not in (info.value.details() or "")
    return info.value.code()


def test_bad_cursors_and_caps_are_refused_clearly(daemon):
    stub = daemon.stub
    first = stub.GetContent(
        pb.GetContentRequest(location="async", mode=pb.CONTENT_MODE_FULL, max_chars=2000)
    )
    cursor = first.next_cursor
    assert cursor

    def get(location="async", **fields):
        return lambda: stub.GetContent(
            pb.GetContentRequest(location=location, mode=pb.CONTENT_MODE_FULL, **fields)
        )

    for bad in (
        "not-a-cursor",
        cursor[:-3],
        cursor[:-1] + ("A" if cursor[-1] != "A" else "B"),
        "é",
    ):
        assert _code(get(max_chars=2000, cursor=bad)) == grpc.StatusCode.INVALID_ARGUMENT, bad
    # A cursor of another answer: another page, or the same page in another mode.
    assert _code(get("release-notes", max_chars=2000, cursor=cursor)) == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    assert (
        _code(
            lambda: stub.GetContent(
                pb.GetContentRequest(
                    location="async", mode=pb.CONTENT_MODE_SNIPPET, max_chars=2000, cursor=cursor
                )
            )
        )
        == grpc.StatusCode.FAILED_PRECONDITION
    )
    assert _code(get(cursor=cursor)) == grpc.StatusCode.INVALID_ARGUMENT  # no max_chars
    assert _code(get(max_chars=50)) == grpc.StatusCode.INVALID_ARGUMENT
    assert _code(get(max_chars=-1)) == grpc.StatusCode.INVALID_ARGUMENT
    # The daemon keeps serving, and the good cursor still works.
    second = stub.GetContent(
        pb.GetContentRequest(
            location="async", mode=pb.CONTENT_MODE_FULL, max_chars=2000, cursor=cursor
        )
    )
    assert second.part.number == 2 and second.part.start_char == first.part.end_char


def test_a_cursor_is_stable_for_a_doc_version_and_refused_after_a_change(fastapi_corpus, tmp_path):
    config = _tree(tmp_path / "tree")
    request = pb.GetContentRequest(location="async", mode=pb.CONTENT_MODE_FULL, max_chars=3000)
    with running(["--config", str(config)], tmp_path / "state1") as first:
        one = first.stub.GetContent(request)
        two = first.stub.GetContent(
            pb.GetContentRequest(
                location="async", mode=pb.CONTENT_MODE_FULL, max_chars=3000, cursor=one.next_cursor
            )
        )
    # Another daemon over the same file: the same cursor gives the same part.
    with running(["--config", str(config)], tmp_path / "state2") as again:
        same = again.stub.GetContent(
            pb.GetContentRequest(
                location="async", mode=pb.CONTENT_MODE_FULL, max_chars=3000, cursor=one.next_cursor
            )
        )
        assert (same.content, same.next_cursor) == (two.content, two.next_cursor)
    page = tmp_path / "tree/docs/async.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\n\nOne more paragraph.\n", encoding="utf-8"
    )
    with running(["--config", str(config)], tmp_path / "state3") as changed:
        with pytest.raises(grpc.RpcError) as info:
            changed.stub.GetContent(
                pb.GetContentRequest(
                    location="async",
                    mode=pb.CONTENT_MODE_FULL,
                    max_chars=3000,
                    cursor=one.next_cursor,
                )
            )
        assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "doc_version" in info.value.details()


def _headings(text: str) -> list[tuple[int, str]]:
    """(line, heading line) of every ATX heading outside fenced blocks."""
    found, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            found.append((number, line))
    return found


def test_outline_of_a_markdown_page(daemon, tree: Path):
    stub = daemon.stub
    reply = stub.GetContent(
        pb.GetContentRequest(location="async#very-technical-details", mode=pb.CONTENT_MODE_OUTLINE)
    )
    text = (tree.parent / "docs/async.md").read_text(encoding="utf-8")
    assert reply.content == "" and reply.location == "async"
    assert reply.total_lines == len(text.splitlines())
    headings = _headings(text)
    assert [e.start_line for e in reply.outline] == [line for line, _ in headings]
    for entry, (_, heading) in zip(reply.outline, headings, strict=True):
        assert entry.kind == "heading"
        assert entry.level == len(heading) - len(heading.lstrip("#"))
        assert entry.location.startswith("async#") and entry.ref_id
        section = stub.GetContent(
            pb.GetContentRequest(location=entry.location, mode=pb.CONTENT_MODE_FULL)
        )
        assert (section.start_line, section.end_line) == (entry.start_line, entry.end_line)
        assert entry.chars == len(section.content)
        assert entry.lines == entry.end_line - entry.start_line + 1
        assert entry.title and entry.title in heading.replace("`", "")


def test_outline_of_a_python_file(daemon, tree: Path):
    reply = daemon.stub.GetContent(
        pb.GetContentRequest(location="fastapi/routing.py", mode=pb.CONTENT_MODE_OUTLINE)
    )
    lines = (tree.parent / "code/fastapi/routing.py").read_text(encoding="utf-8").splitlines()
    assert reply.content == "" and reply.kind == pb.REF_KIND_FILE
    assert reply.total_lines == len(lines)
    by_title = {e.title: e for e in reply.outline}
    router = by_title["APIRouter"]
    assert router.kind == "class" and router.level == 1
    assert lines[router.start_line - 1].startswith("class APIRouter")
    method = by_title["APIRouter.add_api_route"]
    assert method.kind in {"method", "function"} and method.level == 2
    assert list(method.section_path) == ["APIRouter", "add_api_route"]
    assert router.start_line < method.start_line <= method.end_line <= router.end_line
    for entry in reply.outline:
        # A definition starts at its leading comments, decorators or signature.
        own = lines[entry.start_line - 1 : entry.end_line]
        first = next(line.lstrip() for line in own if not line.lstrip().startswith("#"))
        assert first.startswith(("def ", "async def ", "class ", "@")), entry.title
        assert entry.chars == len("\n".join(lines[entry.start_line - 1 : entry.end_line]))
        assert entry.location == f"fastapi/routing.py#L{entry.start_line}-L{entry.end_line}"
    assert [e.start_line for e in reply.outline] == sorted(e.start_line for e in reply.outline)


def test_outline_locations_of_code_fetch_exactly_their_definitions(daemon):
    """A definition's ``path#Lstart-Lend`` is a line location: it reads back exactly those
    lines, as many characters as the entry says."""
    stub = daemon.stub
    reply = stub.GetContent(
        pb.GetContentRequest(location="fastapi/routing.py", mode=pb.CONTENT_MODE_OUTLINE)
    )
    assert reply.scope == "file" and not reply.symbol
    assert len(reply.outline) > 20
    for entry in reply.outline:
        got = stub.GetContent(pb.GetContentRequest(location=entry.location, max_lines=WHOLE))
        assert got.scope == "lines" and not got.truncated, entry.location
        assert (got.start_line, got.end_line) == (entry.start_line, entry.end_line)
        assert len(got.content) == entry.chars and got.location == entry.location


@pytest.mark.parametrize(
    ("location", "mode"),
    [
        ("fastapi/routing.py#APIRouter.add_api_route", pb.CONTENT_MODE_DEFINITION),
        ("fastapi/routing.py#L100-L700", pb.CONTENT_MODE_SNIPPET),
    ],
)
def test_a_definition_or_a_line_range_comes_in_parts_numbered_by_its_lines(daemon, location, mode):
    """Parts page through a definition (after its class line) or exact lines like any answer;
    their lines are the file's, and only the first part holds the class line and its context."""
    stub = daemon.stub
    whole = stub.GetContent(pb.GetContentRequest(location=location, mode=mode, max_lines=WHOLE))
    parts = _parts(stub, location, 1_000, mode)
    assert len(parts) > 2 and "".join(p.content for p in parts) == whole.content
    assert parts[0].start_line == whole.start_line and parts[-1].end_line == whole.end_line
    for previous, part in itertools.pairwise(parts):
        assert part.start_line == previous.end_line + 1
    for part in parts:
        assert len(part.content) <= 1_000 and part.total_chars == len(whole.content)
        assert (part.scope, part.symbol) == (whole.scope, whole.symbol)
    if mode == pb.CONTENT_MODE_DEFINITION:
        assert whole.scope == "definition" and whole.symbol == "APIRouter.add_api_route"
        assert [c.reason for c in whole.context] == ["APIRouter"]
        assert list(parts[0].context) == list(whole.context)
        assert all(not p.context for p in parts[1:])
        assert parts[0].content.startswith("class APIRouter")
        assert parts[0].part.whole_lines == whole.end_line - whole.start_line + 2
    else:
        assert (whole.scope, whole.start_line, whole.end_line) == ("lines", 100, 700)


def test_outline_by_ref_matches_outline_by_location(daemon):
    stub = daemon.stub
    hit = stub.GetContent(pb.GetContentRequest(location="fastapi/routing.py#L10"))
    by_ref = stub.GetContent(pb.GetContentRequest(ref_id=hit.ref_id, mode=pb.CONTENT_MODE_OUTLINE))
    by_location = stub.GetContent(
        pb.GetContentRequest(location="fastapi/routing.py", mode=pb.CONTENT_MODE_OUTLINE)
    )
    assert list(by_ref.outline) == list(by_location.outline) and by_ref.outline


def test_parts_of_each_section_cover_exactly_its_lines(daemon):
    """Sections end with a blank line before the next heading: parts count it as a line."""
    stub = daemon.stub
    outline = stub.GetContent(pb.GetContentRequest(location="async", mode=pb.CONTENT_MODE_OUTLINE))
    for entry in outline.outline[:8]:
        whole = stub.GetContent(
            pb.GetContentRequest(location=entry.location, mode=pb.CONTENT_MODE_FULL)
        )
        one = stub.GetContent(
            pb.GetContentRequest(
                location=entry.location, mode=pb.CONTENT_MODE_FULL, max_chars=len(whole.content) + 1
            )
        )
        assert (one.start_line, one.end_line, one.content) == (
            whole.start_line,
            whole.end_line,
            whole.content,
        )
        parts = _parts(stub, entry.location, 200, pb.CONTENT_MODE_FULL)
        assert parts[0].start_line == entry.start_line and parts[-1].end_line == entry.end_line
        assert "".join(p.content for p in parts) == whole.content
        # A line longer than the cap is the one thing cut mid-line: the next part starts on it.
        for previous, part in itertools.pairwise(parts):
            mid_line = not previous.content.endswith("\n")
            assert part.start_line == previous.end_line + (0 if mid_line else 1)
