"""A dependency's published documentation site, attached at its pinned version, through a real
daemon: a real wheel (built here with pip, its ``Project-URL: Documentation`` pointing at a
site served on loopback) installed into a real virtualenv, the site read by the existing kinds.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import Daemon, cli, running
from tests.support.docsite import debian_html, page, serving
from tests.support.waiting import wait_for

VERSION = "1.2.3"
MODULE = '''\
"""Lantern: a small task queue."""


def enqueue_lantern_task(name: str) -> str:
    """Put a task on the lantern queue and return its id."""
    return name
'''
PROJECT = """\
[project]
name = "harbour"
version = "0.1.0"
dependencies = ["lantern>=1"]
"""
UV_LOCK = f"""\
version = 1
requires-python = ">=3.11"

[[package]]
name = "lantern"
version = "{VERSION}"
source = {{ registry = "https://pypi.org/simple" }}
"""


def _pip(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def make_project(folder: Path, docs_url: str) -> Path:
    """A project pinning lantern 1.2.3, installed in its ``.venv`` from a wheel built here
    whose metadata names ``docs_url`` as its documentation."""
    package = folder / "lantern-src"
    (package / "lantern").mkdir(parents=True)
    (package / "lantern" / "__init__.py").write_text(MODULE)
    (package / "pyproject.toml").write_text(
        "[build-system]\n"
        'requires = ["setuptools"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        "[project]\n"
        'name = "lantern"\n'
        f'version = "{VERSION}"\n\n'
        "[project.urls]\n"
        f'Documentation = "{docs_url}"\n'
    )
    wheels = folder / "wheels"
    _pip(
        "wheel", "--no-index", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(package)
    )
    project = folder / "harbour"
    project.mkdir()
    (project / "pyproject.toml").write_text(PROJECT)
    (project / "uv.lock").write_text(UV_LOCK)
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    wheel = next(wheels.glob("lantern-*.whl"))
    _pip("--python", str(venv / "bin" / "python"), "install", "--no-index", "--no-deps", str(wheel))
    return project


def config(folder: Path, project: Path, **extra: object) -> Path:
    lines = [
        # Sites are fetched in the background; the pages they add join at the next listing.
        "[server]",
        "rescan_interval = 1",
        "[[sources]]",
        'name = "deps"',
        'kind = "dependencies"',
        f'root = "{project}"',
        "default = true",
        "docs_sites = true",
        f'docs_cache_dir = "{folder / "docs-cache"}"',
        "docs_requests_per_second = 200",
        "docs_timeout_seconds = 5",
    ]
    lines += [f"{key} = {value}" for key, value in extra.items()]
    path = folder / "scriptorium.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@contextmanager
def daemon_for(folder: Path, project: Path, **extra: object) -> Iterator[Daemon]:
    toml = config(folder, project, **extra)
    with running(["--config", str(toml)], folder / "state") as daemon:
        yield daemon


def docs_hits(daemon: Daemon, query: str) -> list[pb.SearchResult]:
    reply = daemon.stub.Search(pb.SearchRequest(query=query, top_k=10), timeout=60)
    return [r for r in reply.results if r.docs_version]


def found(daemon: Daemon, query: str) -> list[pb.SearchResult]:
    hits: list[pb.SearchResult] = []

    def some() -> bool:
        hits[:] = docs_hits(daemon, query)
        return bool(hits)

    assert wait_for(some), daemon.log()
    return hits


def library(daemon: Daemon) -> pb.LibraryStatus:
    reply = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=30)
    deps = next(s for s in reply.sources if s.name == "deps")
    return next(lib for lib in deps.libraries if lib.name == "lantern")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_site_serving_the_pinned_version_is_attached_at_it(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write(
        site / "docs/1.2/index.html",
        page("Lantern 1.2", "Retries back off exponentially in lantern twelve.", ("guide.html",)),
    )
    write(site / "docs/1.2/guide.html", page("Guide", "Workers drain the harbourmaster queue."))
    write(site / "docs/index.html", page("Lantern latest", "Retries use jittered backoff now."))
    with serving(site) as server:
        project = make_project(tmp_path, f"{server.url}/docs")
        with daemon_for(tmp_path, project) as daemon:
            hits = found(daemon, "retries back off exponentially")
            top = hits[0]
            assert (top.library, top.library_version, top.docs_version) == (
                "lantern",
                VERSION,
                "1.2",
            )
            assert top.location.startswith(f"lantern@{VERSION}:docs@1.2/")
            assert top.url.startswith(f"{server.url}/docs/1.2/")
            only = daemon.stub.Search(
                pb.SearchRequest(query="retries back off", library="lantern"), timeout=60
            )
            assert any(r.docs_version == "1.2" for r in only.results)
            guide = found(daemon, "harbourmaster queue workers drain")
            assert guide[0].url.startswith(f"{server.url}/docs/1.2/guide.html")
            # The latest docs' page was never read: only the pinned version's folder.
            assert not [h for h in docs_hits(daemon, "jittered backoff") if "jittered" in h.snippet]
            status = library(daemon)
            assert (status.docs_url, status.docs_kind, status.docs_version) == (
                f"{server.url}/docs/1.2/",
                "site",
                "1.2",
            )
            assert status.docs_pages == 2 and status.docs_detail.startswith("attached site at 1.2")
            # The library's own code is served beside its docs.
            reply = daemon.stub.Search(pb.SearchRequest(query="enqueue_lantern_task"), timeout=60)
            assert any(r.location.startswith(f"lantern@{VERSION}:lantern/") for r in reply.results)
            mcp_label = cli(daemon, "sources")
            assert "documentation sites: 1 attached (lantern 1.2)" in mcp_label.stdout
        assert not server.statuses("/docs/index.html")
        # A refresh asks with the kept pages' validators: the unchanged site answers 304.
        with daemon_for(tmp_path, project, docs_refresh_hours=0) as daemon:
            assert wait_for(lambda: 304 in server.statuses("/docs/1.2/guide.html")), daemon.log()
            assert found(daemon, "harbourmaster queue workers drain")[0].docs_version == "1.2"


def test_a_site_without_version_folders_is_attached_as_latest(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write(site / "docs/index.html", page("Lantern", "Lanterns glow over the quayside depot."))
    with serving(site) as server:
        project = make_project(tmp_path, f"{server.url}/docs/")
        with daemon_for(tmp_path, project) as daemon:
            top = found(daemon, "lanterns glow quayside depot")[0]
            assert (top.library, top.docs_version) == ("lantern", "latest")
            assert top.location.startswith(f"lantern@{VERSION}:docs@latest/")
            status = library(daemon)
            assert (status.docs_kind, status.docs_version) == ("site", "latest")
            assert status.docs_url == f"{server.url}/docs/"
        # Every version folder was asked for before the base was taken as the latest docs.
        for folder in ("1.2", "v1.2", "en/1.2", VERSION):
            assert server.statuses(f"/docs/{folder}/") == [404]


LLMS = """\
# Lantern

> Lantern is a small task queue.

## Docs

- [Quickstart](quickstart.md): the first worker
"""


def test_an_llms_txt_site_is_read_as_llms_txt(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write(site / "docs/llms.txt", LLMS)
    write(site / "docs/quickstart.md", "# Quickstart\n\nStart a lighthouse keeper worker.\n")
    with serving(site) as server:
        project = make_project(tmp_path, f"{server.url}/docs")
        with daemon_for(tmp_path, project) as daemon:
            top = found(daemon, "lighthouse keeper worker")[0]
            assert top.library == "lantern" and top.docs_version == "latest"
            assert top.url.startswith(f"{server.url}/docs/quickstart.md")
            status = library(daemon)
            assert (status.docs_kind, status.docs_version) == ("llms_txt", "latest")
            assert status.docs_pages == 2  # llms.txt itself and the page it links


def test_an_unreachable_site_leaves_the_code_served_and_says_so(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on that port any more: every request is refused.
    project = make_project(tmp_path, f"http://127.0.0.1:{port}/docs")
    with daemon_for(tmp_path, project) as daemon:
        reply = daemon.stub.Search(pb.SearchRequest(query="enqueue_lantern_task"), timeout=60)
        code = [r for r in reply.results if r.location.startswith(f"lantern@{VERSION}:lantern/")]
        assert code and not code[0].docs_version
        said = "documentation sites: 0 attached, 1 not attached (lantern:"
        assert wait_for(lambda: said in daemon.full_log()), daemon.log()
        status = library(daemon)
        assert status.docs_pages == 0 and not status.docs_url
        assert status.docs_detail.startswith("not reached:"), status.docs_detail
        assert "ConnectError" in status.docs_detail
        reply = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=30)
        deps = next(s for s in reply.sources if s.name == "deps")
        assert deps.state == pb.SOURCE_STATE_READY and not deps.last_error
        log = daemon.full_log()
        assert log.count(said) == 1 and log.count("documentation sites:") == 1
        assert "Traceback" not in log


def test_a_real_sphinx_site_is_attached_within_its_page_bound(tmp_path: Path) -> None:
    """Requests' published HTML (from Debian) served as a library's 1.2 docs: its objects.inv
    says Sphinx; its searchindex.js is of an older Sphinx the ``sphinx`` kind does not read, so
    its HTML pages are crawled as a site's, at most ``docs_max_pages`` of them."""
    site = tmp_path / "site"
    shutil.copytree(debian_html("python-requests-doc"), site / "docs/1.2", symlinks=True)
    with serving(site) as server:
        project = make_project(tmp_path, f"{server.url}/docs")
        with daemon_for(tmp_path, project, docs_max_pages=8) as daemon:
            top = found(daemon, "passing parameters in URLs query string")[0]
            assert top.location.startswith(f"lantern@{VERSION}:docs@1.2/")
            assert top.docs_version == "1.2" and top.url.startswith(f"{server.url}/docs/1.2/")
            status = library(daemon)
            assert (status.docs_kind, status.docs_version, status.docs_pages) == ("site", "1.2", 8)
            assert "its sphinx files could not be read" in status.docs_detail
        assert server.statuses("/docs/1.2/objects.inv") == [200]
