"""Reading a file inside a source's root: what is refused, and what cannot hang a build."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scriptorium.sources import paths
from scriptorium.sources.paths import PathEscapeError, read_inside


@pytest.fixture
def root(tmp_path: Path) -> str:
    """``docs`` with a page, a symlink to it, and a symlink into the sibling ``docs-private``."""
    docs, private = tmp_path / "docs", tmp_path / "docs-private"
    (docs / "guide").mkdir(parents=True)
    private.mkdir()
    (private / "secret.md").write_text("# Secret\n", "utf-8")
    (docs / "guide/page.md").write_text("# Page\n", "utf-8")
    (docs / "leak.md").symlink_to(private / "secret.md")
    (docs / "alias.md").symlink_to(docs / "guide/page.md")
    return str(docs.resolve())


def test_a_source_resolves_paths_inside_its_root_and_refuses_a_symlink_into_a_sibling(
    root: str,
) -> None:
    """The root check compares resolved strings: ``docs-private`` is not inside ``docs``."""
    from scriptorium.blocks.extractors import ExtractorChain
    from scriptorium.sources.base import SourceConfig, SourceContext
    from scriptorium_plugins.markdown.extractor import MarkdownExtractor
    from scriptorium_plugins.markdown.source import MarkdownSource

    context = SourceContext(extractors=ExtractorChain([MarkdownExtractor()]))
    source = MarkdownSource(SourceConfig(name="d", kind="markdown", root=Path(root)), context)
    with pytest.raises(PathEscapeError):
        source.resolve_path("leak.md")
    assert source.resolve_path("alias.md") == Path(root, "guide/page.md")
    assert source.resolve_path("./guide//page.md") == Path(root, "guide/page.md")
    assert source.resolve_path("") == Path(root)


def _without_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a system without ``/proc``: the opened file's path cannot be asked for."""

    class NoProc:
        def __getattr__(self, name: str):
            return getattr(os, name)

        @staticmethod
        def readlink(path: str) -> str:
            raise OSError("no /proc here")

    monkeypatch.setattr(paths, "os", NoProc())


@pytest.mark.parametrize("proc", [True, False], ids=["proc", "realpath"])
def test_a_file_that_resolves_outside_the_root_is_refused_and_one_inside_is_read(
    root: str, proc: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not proc:
        _without_proc(monkeypatch)
    with pytest.raises(PathEscapeError):
        read_inside(root, "leak.md", 1000)
    assert read_inside(root, "alias.md", 1000) == b"# Page\n"
    assert read_inside(root, "./guide//page.md", 1000) == b"# Page\n"
    assert read_inside(root, "guide/missing.md", 1000) is None
    with pytest.raises(PathEscapeError):
        read_inside(root, "../docs-private/secret.md", 1000)


def test_a_fifo_or_a_directory_where_a_file_was_listed_reads_as_nothing(root: str) -> None:
    """Opened without blocking: a FIFO with no writer would otherwise hang the build."""
    os.mkfifo(os.path.join(root, "pipe.md"))
    assert read_inside(root, "pipe.md", 1000) is None
    assert read_inside(root, "guide", 1000) is None


def test_the_limit_counts_the_bytes_read(root: str) -> None:
    Path(root, "big.md").write_bytes(b"x" * 101)
    assert read_inside(root, "big.md", 100) is None
    assert read_inside(root, "big.md", 101) == b"x" * 101
