"""A tree of plain-text pages (Vim's help) as a ``text`` source through a daemon."""

from __future__ import annotations

import shutil
from pathlib import Path

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.waiting import wait_for

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/plaintext/vim"
BLOCK_CHARS = 1500


def search(stub, query: str) -> list[pb.SearchResult]:
    reply = stub.Search(pb.SearchRequest(query=query, kinds=[pb.CORPUS_DOCS]), timeout=30)
    return list(reply.results)


def content(stub, location: str) -> pb.GetContentResponse:
    request = pb.GetContentRequest(location=location, mode=pb.CONTENT_MODE_FULL)
    return stub.GetContent(request, timeout=30)


def test_text_pages_are_bounded_blocks_with_line_ranges(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    shutil.copytree(FIXTURE, pages / "vim")
    (pages / "requirements.txt").write_text("wombat==1.0\n", "utf-8")
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "requirements.txt").write_text("platypus==2.0\n", "utf-8")
    (repo / "docs/index.md").write_text("# Repo\n\nThe repository's docs.\n", "utf-8")
    config = tmp_path / "scriptorium.toml"
    config.write_text(
        f"""
[[sources]]
name = "help"
kind = "text"
root = "{pages}"
default = true
block_chars = {BLOCK_CHARS}

[[sources]]
name = "repo"
kind = "markdown"
root = "{repo}"
""",
        encoding="utf-8",
    )
    text = (FIXTURE / "cmdline.txt").read_text("utf-8")
    lines = text.splitlines()
    with running(["--config", str(config), "--watch-interval", "0.2"], tmp_path / "state") as d:
        stub = d.stub
        hits = search(stub, "cnoremap tcsh style editing keys")
        top = hits[0]
        assert top.location.startswith("vim/cmdline#L")
        section = content(stub, top.location)
        assert section.resolution.reason == "resolved"
        assert "tcsh" in section.content
        assert len(section.content) <= BLOCK_CHARS
        expected = "\n".join(lines[section.start_line - 1 : section.end_line])
        assert section.content == expected
        assert top.location == f"vim/cmdline#L{section.start_line}-L{section.end_line}"
        assert "tcsh" in top.preview
        # The 59 KB page is many blocks; the page itself answers by its name and with .txt.
        assert content(stub, "vim/cmdline.txt").resolution.rule == "variant"
        # A repository's requirements.txt is not a page of a markdown source.
        assert not [h for h in search(stub, "platypus") if h.location.startswith("repo/")]

        page = pages / "vim/cmdline.txt"
        page.write_text(text + "\n\nA quokka may also edit the command line.\n", "utf-8")
        # The new last paragraph joins the page's last block, whose range now reaches it.
        assert wait_for(
            lambda: any(
                h.location.startswith("vim/cmdline#L")
                and h.location.endswith(f"-L{len(lines) + 3}")
                for h in search(stub, "quokka")[:1]
            )
        )
