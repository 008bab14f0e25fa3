"""The web console in a real browser: headless Chromium (Debian's) driven by playwright-core.

A real daemon serves HTTP on loopback; ``tests/browser/console.mjs`` types a query, sees the
results with their reasons and stages, opens one (highlighted ranges, the whole page in parts),
goes back, opens the sources page, opens the shared link in a fresh page and checks a narrow
window. Screenshots of every page go to ``tests/artefacts/browser/`` (git-ignored). ``make test``
installs Chromium (``scripts/ensure_browser.sh``) and playwright-core (``make node``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from scriptorium.faults import ENV as FAULT_PAUSE
from scriptorium.faults import reached_marker
from tests.support.daemon import CORPUS, REPO
from tests.support.docsite import page, serving
from tests.support.http import HttpDaemon, config_text
from tests.support.waiting import wait_for

SCRIPT = REPO / "tests" / "browser" / "console.mjs"
ARTEFACTS = REPO / "tests" / "artefacts" / "browser"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
PLAYWRIGHT = REPO / "node_modules" / "playwright-core"


def _missing() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (scripts/ensure_browser.sh installs it)"
    if not PLAYWRIGHT.is_dir():
        return "playwright-core is missing (make node installs it)"
    if shutil.which("node") is None:
        return "node is missing"
    return None


@pytest.fixture(scope="module", autouse=True)
def browser_available() -> None:
    why = _missing()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def config(tree: Path) -> Path:
    path = tree / "console.toml"
    path.write_text(config_text(tree), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tree(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("console-tree")
    shutil.copytree(CORPUS / "docs/en/docs/tutorial", root / "docs/tutorial")
    shutil.copytree(CORPUS / "fastapi", root / "code/fastapi")
    return root


def drive(scenario: str, base: str, *extra: str, expected_error: str | None = None) -> dict:
    """Run a scenario; the page may log no error but ``expected_error`` (a 503 while loading)."""
    out = ARTEFACTS / scenario
    if out.exists():
        shutil.rmtree(out)
    result = subprocess.run(
        ["node", str(SCRIPT), scenario, base, str(out), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "CHROMIUM": str(CHROMIUM)},
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert "failure" not in seen, seen["failure"]
    errors = [e for e in seen["errors"] if expected_error is None or expected_error not in e]
    assert errors == [], errors
    return seen


def test_search_open_a_result_and_see_the_sources(tree):
    with HttpDaemon(["--config", str(config(tree))], tree / "state") as daemon:
        seen = drive("journey", daemon.base)
    out = ARTEFACTS / "journey"
    for name in ("search", "content", "content-part", "sources", "search-narrow"):
        assert (out / f"{name}.png").stat().st_size > 1000, name

    search = seen["search"]
    query = parse_qs(urlparse(search["url"]).query)
    assert query["q"] == ["declare path parameters"] and query["explain"] == ["true"]
    assert query["kinds"] == ["docs"]
    assert search["count"] >= 3
    assert "Path Parameters" in search["firstCrumbs"]
    assert search["firstPreview"].strip()
    assert search["firstScore"].startswith("score ")
    assert search["firstReasons"], "explain shows the named reasons"
    assert search["firstStages"] and all(": kept" in s for s in search["firstStages"])

    content = seen["content"]
    shown = parse_qs(urlparse(content["url"]).query)
    assert shown["location"][0].startswith("tutorial/path-params")
    assert content["title"] == search["firstTitle"]
    assert "docs" in content["meta"] and content["text"].strip()

    whole = seen["whole"]
    assert parse_qs(urlparse(whole["url"]).query)["location"] == ["tutorial/path-params"]
    assert whole["hasNext"], "path-params is longer than one part"
    # The page's highlighted ranges (its code blocks and nested headings) are marked.
    assert any("Path Parameters" not in m and m.strip() for m in whole["marked"]), whole["marked"]
    assert "Part 2 of" in whole["secondPart"]
    assert "cursor" in parse_qs(urlparse(whole["secondUrl"]).query)
    # The second part is numbered from its own first line, as its meta line says.
    assert f"lines {whole['secondFirstLine']}–" in whole["secondMeta"]
    assert int(whole["secondFirstLine"]) > 1

    assert seen["back"]["count"] == search["count"]
    names = {row[0]: row for row in seen["sources"]}
    assert set(names) == {"docs", "code"}
    assert all(row[2] == "ready" for row in names.values())
    assert int(names["docs"][3]) > 10  # documents

    assert seen["shared"]["firstTitle"] == search["firstTitle"]
    assert seen["shared"]["query"] == "declare path parameters" and seen["shared"]["explain"]

    narrow = seen["narrow"]
    assert narrow["scrollWidth"] <= narrow["clientWidth"], narrow
    assert narrow["unlabelled"] == [] and narrow["lang"] == "en"
    # Nothing but this daemon was asked for anything.
    assert all(url.startswith(daemon.base) for url in seen["requests"]), seen["requests"]


def test_the_sources_page_follows_a_build_by_itself(tree, tmp_path):
    release = tmp_path / "release-build"
    d = HttpDaemon(
        ["--config", str(config(tree))],
        tmp_path / "state",
        env={FAULT_PAUSE: f"build.write={release}"},
    )
    d.start_process()
    try:
        assert wait_for(reached_marker(release).exists, 120), d.log()
        # /readyz answers 503 while loading, which the browser logs as a failed load.
        seen = drive("sources-live", d.base, str(release), expected_error="status of 503")
        assert any("loading" in row["text"] for row in seen["loading"])
        assert any(row["progress"] for row in seen["loading"]), seen["loading"]
        assert seen["healthWhileLoading"] == "not serving"
        assert len(seen["ready"]) == 2
        d.wait_serving()
    finally:
        release.touch()
        d.terminate()
    for name in ("sources-loading", "sources-ready"):
        assert (ARTEFACTS / "sources-live" / f"{name}.png").exists()


def test_the_sources_page_shows_a_partial_crawl(tmp_path):
    """A site that refuses one page and stalls on another: the Crawl cell says partial, in the
    warning colour, with the counts, and lists the failed pages with their statuses."""
    site = tmp_path / "www"
    site.mkdir()
    links = ("/open.html", "/members.html", "/slow.html")
    (site / "index.html").write_text(page("Home", "The harbour guide.", links))
    (site / "open.html").write_text(page("Tides", "High tide reaches the quay at noon."))
    (site / "members.html").write_text(page("Members", "Private berth list."))
    with serving(site, forbidden={"/members.html"}, hanging={"/slow.html"}) as server:
        toml = tmp_path / "crawl.toml"
        toml.write_text(
            f'[[sources]]\nname = "harbour"\nkind = "site"\nstart_urls = ["{server.url}/"]\n'
            f'cache_dir = "{tmp_path / "cache"}"\nrequests_per_second = 200\n'
            "timeout_seconds = 1\n",
            encoding="utf-8",
        )
        with HttpDaemon(["--config", str(toml)], tmp_path / "state") as daemon:
            seen = drive("sources-crawl", daemon.base)
    crawl = seen["crawl"]
    assert crawl["state"] == "partial"
    assert crawl["text"] == "partial · 2 fetched · 2 failed"
    assert crawl["title"].startswith("partial: 2 pages fetched, 2 failed")
    assert crawl["color"] != crawl["readyColor"]  # partial is shown as a problem
    assert crawl["stateCell"] == "ready"  # the Crawl column carries the sentence
    assert sorted(crawl["failures"]) == ["/members.html: HTTP 403", "/slow.html: timed out"]
    assert (ARTEFACTS / "sources-crawl" / "sources-crawl.png").exists()
