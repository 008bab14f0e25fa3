"""What every test shares: its tier, the FastAPI corpus, and the daemons' settings.

**Tiers come from the folder** a test lives in (``tests/unit``, ``tests/e2e``, ``tests/soak``,
``tests/browser``): each test gets that marker here, so no file writes its own and a new file
cannot be left out of ``make test-unit`` or ``make test-e2e`` (``-m unit``, ``-m e2e``).
Markers are strict (``--strict-markers`` in pyproject.toml): a misspelt one is an error.

**The FastAPI corpus** lives outside the repository (``/work/shared/corpora/fastapi``, or
``shared/`` beside the clone; ``tests.support.daemon.CORPUS``). A test that reads it asks for
the ``fastapi_corpus`` fixture: without the corpus it is skipped on a developer's machine and
fails under CI (``CI=true``), where a missing corpus must never pass as a green run.

**The semantic retriever** encodes every block in the background once a generation serves. The
daemons most tests start do not need it, and on a two-core machine it would take the cores the
next test wants; it is turned off here, and the tests of the retriever turn it on for their
own daemons (``SCRIPTORIUM_SEMANTIC=on``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.daemon import CORPUS

os.environ.setdefault("SCRIPTORIUM_SEMANTIC", "off")

TESTS = Path(__file__).resolve().parent
TIERS = ("unit", "e2e", "soak", "browser")


def tier_of(path: Path) -> str | None:
    """The tier a test file belongs to: the first folder under ``tests/``, when it is one."""
    try:
        folder = path.resolve().relative_to(TESTS).parts[0]
    except (ValueError, IndexError):
        return None
    return folder if folder in TIERS else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = tier_of(Path(str(item.path)))
        if tier is not None:
            item.add_marker(getattr(pytest.mark, tier))


def corpus_missing(corpus: Path, *, ci: bool) -> None:
    """Skip (or, under CI, fail) the asking test when ``corpus`` is not a folder."""
    if corpus.is_dir():
        return
    why = f"the FastAPI corpus is not at {corpus} (see tests/support/daemon.py)"
    if ci:
        pytest.fail(f"{why}; CI must have it", pytrace=False)
    pytest.skip(why)


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@pytest.fixture(scope="session")
def fastapi_corpus() -> Path:
    """The shared FastAPI corpus (read only: copy it before changing anything)."""
    corpus_missing(CORPUS, ci=under_ci())
    return CORPUS
