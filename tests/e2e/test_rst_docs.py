"""A Sphinx-style tree of reStructuredText pages through a real daemon: search, content, edits."""

from __future__ import annotations

from pathlib import Path

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.calls import content
from tests.support.daemon import running
from tests.support.trees import write
from tests.support.waiting import wait_for

INSTALL = """\
.. _install:

============
Installation
============

Before you start, read :ref:`the usage notes <usage>`.

.. _install-notes:

Getting started
---------------

Fetch the quokka wheel and run the bootstrap script.

.. code-block:: shell

   pip install quokka

Offline setups
~~~~~~~~~~~~~~

Copy the wheelhouse by hand.

Upgrading
---------

Upgrades keep the old configuration.
"""

API = """\
API reference
=============

.. autofunction:: quokka.tools.bootstrap_wallaby

.. autoclass:: quokka.Burrow
   :members:
"""


def tree(root: Path) -> Path:
    docs = root / "docs"
    write(docs / "guide/install.rst", INSTALL)
    write(docs / "guide/usage.rst", ".. _usage:\n\nUsage\n=====\n\nCall the burrow daily.\n")
    write(docs / "api.rst", API)
    write(docs / "conf.py", "project = 'quokka'\n")
    write(docs / "changelog.md", "# Changelog\n\n## 1.0\n\nThe first quokka release.\n")
    return docs


def search(stub, query: str) -> list[str]:
    reply = stub.Search(pb.SearchRequest(query=query, kinds=[pb.CORPUS_DOCS]), timeout=30)
    return [result.location for result in reply.results]


def test_rst_sections_are_found_read_and_kept_current(tmp_path: Path) -> None:
    docs = tree(tmp_path)
    with running([str(docs), "--watch-interval", "0.2"], tmp_path / "state") as daemon:
        stub = daemon.stub
        assert search(stub, "bootstrap script quokka wheel")[0] == "guide/install#getting-started"
        # Previews show the text a reader sees, not the roles around it.
        reply = stub.Search(pb.SearchRequest(query="read the usage notes first"), timeout=30)
        intro = next(r for r in reply.results if r.location == "guide/install#installation")
        assert "read the usage notes" in intro.preview
        assert ":ref:" not in intro.preview and "<usage>" not in intro.preview
        # Markdown beside it is still indexed.
        assert "changelog#10" in search(stub, "first quokka release")
        # Autodoc directives keep the names they document searchable.
        assert search(stub, "bootstrap_wallaby")[0] == "api#api-reference"

        section = content(stub, "guide/install#getting-started")
        assert section.resolution.reason == "resolved"
        assert section.section_path == ["Installation", "Getting started"]
        lines = section.content.splitlines()
        assert lines[0] == "Getting started"
        assert "Copy the wheelhouse by hand." in section.content  # its subsection
        assert "Upgrades" not in section.content  # the next section of its level
        source_lines = INSTALL.splitlines()
        start, upgrading = (
            source_lines.index("Getting started") + 1,
            source_lines.index("Upgrading"),
        )
        assert (section.start_line, section.end_line) == (start, upgrading)

        # A label before the section names it too, and a page answers by every rule.
        assert content(stub, "guide/install#install-notes").content == section.content
        for location, rule in [
            ("guide/install", "exact"),
            ("guide/install.rst", "variant"),
            ("install", "canonical-leaf"),
        ]:
            page = content(stub, location)
            assert (page.resolution.reason, page.resolution.rule) == ("resolved", rule), location
            assert page.content == INSTALL.rstrip("\n")

        write(
            docs / "guide/install.rst",
            INSTALL + "\nTroubleshooting\n---------------\n\nA stuck platypus needs a restart.\n",
        )
        assert wait_for(
            lambda: search(stub, "stuck platypus")[:1] == ["guide/install#troubleshooting"]
        )
        fresh = content(stub, "guide/install#troubleshooting")
        assert fresh.content.splitlines()[0] == "Troubleshooting"
        assert "A stuck platypus needs a restart." in fresh.content
