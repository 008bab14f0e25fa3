"""What the text output of ``get`` and ``sources`` tells a person, against a real daemon."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from scriptorium.faults import ENV as FAULT_ENV
from scriptorium.faults import reached_marker
from tests.support.daemon import CORPUS, Daemon, cli


def small_tree(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "src").mkdir()
    for page in ("first-steps.md", "path-params.md", "query-params.md"):
        shutil.copy(CORPUS / "docs/en/docs/tutorial" / page, root / "docs" / page)
    shutil.copy(CORPUS / "docs_src/first_steps/tutorial001_py310.py", root / "src/main.py")
    shutil.copy(CORPUS / "docs_src/path_params/tutorial001_py310.py", root / "src/params.py")
    return root


@pytest.fixture(scope="module")
def daemon(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("cli-text")
    d = Daemon([str(small_tree(work / "project")), "--no-watch"], work / "state")
    d.start()
    yield d
    d.terminate()


# -- get: the resolution's detail and the provenance line ----------------------------------------


def test_get_prints_an_outline_and_parts_with_the_next_cursor(daemon: Daemon) -> None:
    outline = cli(daemon, "get", "first-steps", "--mode", "outline")
    assert outline.returncode == 0, outline.stderr
    rows = outline.stdout.splitlines()
    assert rows[0].split() == ["LINES", "CHARS", "ENTRY", "LOCATION"]
    assert any(r.endswith("first-steps#first-steps") and "First Steps" in r for r in rows)
    code = cli(daemon, "get", "src/main.py", "--mode", "outline")
    assert code.returncode == 0, code.stderr
    assert "function root" in code.stdout and "src/main.py#L" in code.stdout

    first = cli(daemon, "get", "first-steps", "--mode", "full", "--max-chars", "2000")
    assert first.returncode == 0, first.stderr
    assert "part 1 of " in first.stderr and len(first.stdout) <= 2001
    cursor = first.stderr.split("next part: --cursor ", 1)[1].split()[0]
    second = cli(
        daemon, "get", "first-steps", "--mode", "full", "--max-chars", "2000", "--cursor", cursor
    )
    assert second.returncode == 0, second.stderr
    assert "part 2 of " in second.stderr
    bad = cli(daemon, "get", "first-steps", "--max-chars", "2000", "--cursor", "nonsense")
    assert bad.returncode != 0 and "cursor" in bad.stderr and "Traceback" not in bad.stderr


def test_get_shows_why_a_missing_section_returned_the_page(daemon: Daemon) -> None:
    done = cli(daemon, "get", "first-steps#no-such-section", "--max-lines", "3")
    assert done.returncode == 0, done.stderr
    header = done.stderr.splitlines()
    assert "resolved from first-steps#no-such-section by" in header[0]
    assert "note: no section 'no-such-section' on this page; returned the page" in done.stderr
    assert done.stdout.startswith("# First Steps")


def test_get_by_ref_says_so_without_an_empty_location(daemon: Daemon) -> None:
    found = cli(daemon, "--format", "json", "search", "path parameters with types")
    assert found.returncode == 0, found.stderr
    hit = json.loads(found.stdout)["results"][0]
    done = cli(daemon, "get", hit["ref_id"], "--max-lines", "2")
    assert done.returncode == 0, done.stderr
    header = done.stderr.splitlines()[0]
    assert header.startswith(hit["location"]), header
    assert "fetched by ref" in header
    assert "resolved from  " not in header and "from  by" not in header
    # Fetched by its location instead, the same block says how that location was resolved.
    by_location = cli(daemon, "get", hit["location"], "--max-lines", "2")
    assert by_location.returncode == 0, by_location.stderr
    assert "fetched by ref" not in by_location.stderr


# -- sources: counts in the table, during a first build too --------------------------------------


def _row(table: str, name: str) -> list[str]:
    for line in table.splitlines():
        cells = line.split()
        if cells and cells[0] == name:
            return cells
    raise AssertionError(f"no row for {name!r} in:\n{table}")


def test_sources_shows_build_progress_and_counts(fastapi_corpus, tmp_path: Path) -> None:
    tree = small_tree(tmp_path / "project")
    release = tmp_path / "release"
    d = Daemon(
        [str(tree), "--no-watch"],
        tmp_path / "state",
        env={FAULT_ENV: f"build.write={release}"},
    )
    d.start_process()
    try:
        deadline = time.monotonic() + 120
        while not reached_marker(release).exists():
            assert d.proc.poll() is None, d.log()
            assert time.monotonic() < deadline, "the first build never reached its write"
            time.sleep(0.05)
        # The build is held inside its write: no generation yet, every file already read.
        while True:
            during = cli(d, "sources")
            if during.returncode == 0:
                break
            assert time.monotonic() < deadline, during.stderr
            time.sleep(0.05)
        header = during.stdout.splitlines()[0].split()
        assert header[:6] == ["NAME", "KIND", "STATE", "DOCS", "BLOCKS", "BUILD"], during.stdout
        assert _row(during.stdout, "docs")[3:6] == ["0", "0", "3/3"], during.stdout
        assert _row(during.stdout, "code")[3:6] == ["0", "0", "2/2"], during.stdout
    finally:
        release.touch()
    d.wait_serving()
    try:
        after = cli(d, "sources")
        assert after.returncode == 0, after.stderr
        listed = json.loads(cli(d, "--format", "json", "sources").stdout)["sources"]
        for source in listed:
            row = _row(after.stdout, source["name"])
            assert row[3] == str(source["document_count"]) and row[4] == str(source["block_count"])
            assert row[5] == "-"
        assert _row(after.stdout, "docs")[3] == "3" and _row(after.stdout, "code")[3] == "2"
    finally:
        d.terminate()
