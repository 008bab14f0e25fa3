"""The console's vendored Markdown renderer and sanitiser are the npm packages package.json
pins, unchanged but for the source-map comment, and the daemon serves them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scriptorium.http.app import CONSOLE_FILES

REPO = Path(__file__).resolve().parents[2]
CONSOLE = REPO / "daemon" / "scriptorium" / "http" / "console"
VENDORED = {
    "marked.umd.js": ("marked", "lib/marked.umd.js", "marked v{version}"),
    "purify.min.js": ("dompurify", "dist/purify.min.js", "DOMPurify {version}"),
}


def pinned(package: str) -> str:
    return json.loads((REPO / "package.json").read_text())["devDependencies"][package]


@pytest.mark.parametrize("name", sorted(VENDORED))
def test_the_vendored_file_is_the_pinned_release(name: str) -> None:
    package, inside, banner = VENDORED[name]
    version = pinned(package)
    assert version[0].isdigit(), f"{package} must be pinned to one version, not {version!r}"
    vendored = (CONSOLE / name).read_text(encoding="utf-8")
    assert banner.format(version=version) in vendored[:400]
    assert "sourceMappingURL" not in vendored
    installed = REPO / "node_modules" / package
    if not installed.is_dir():
        pytest.skip("node_modules is not installed (make node)")
    assert json.loads((installed / "package.json").read_text())["version"] == version
    original = (installed / inside).read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in original if not line.startswith("//# sourceMappingURL=")]
    assert vendored == "".join(kept)


def test_the_console_loads_them_from_the_daemon_with_their_licences_beside_them() -> None:
    page = (CONSOLE / "index.html").read_text(encoding="utf-8")
    for name in VENDORED:
        assert name in CONSOLE_FILES
        assert f'<script src="/console/{name}" defer></script>' in page
    assert (CONSOLE / "marked.LICENSE.md").is_file() and (CONSOLE / "dompurify.LICENSE").is_file()
