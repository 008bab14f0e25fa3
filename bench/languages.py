"""Build throughput per code language and configuration format.

The third-party files of ``tests/fixtures/code_languages`` (plus the FastAPI corpus's Python) are
grouped by the language the code source gives them and copied until each group holds about
``target`` bytes. For every group this measures, in the same run:

* ``scriptorium index build`` of the group alone (MB/s, the command's own indexing seconds);
* the same bytes renamed to an unknown suffix, so they are cut into line windows rather than
  parsed: the baseline, and the ratio parsed / windows;
* in process, the extractor alone on the group's files: parsed MB/s and line-window MB/s, after
  one untimed file (``first_use_s``: loading the grammar and compiling its query, once per
  process).
"""

from __future__ import annotations

import shutil
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from scriptorium.text import split_lines
from scriptorium_plugins.code.extractor import CodeExtractor, window_blocks
from scriptorium_plugins.code.languages import language_for_path
from tests.support.daemon import CORPUS

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "code_languages"
WINDOW_SUFFIX = ".window"


def language_files() -> dict[str, list[Path]]:
    """Fixture files by language (licences and notes are not code), plus FastAPI's Python."""
    groups: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(FIXTURES.rglob("*")):
        language = language_for_path(path.name) if path.is_file() else None
        if language is not None:
            groups[language].append(path)
    python = sorted((CORPUS / "fastapi").rglob("*.py"))
    if python:
        groups["python"] = python
    return dict(groups)


def _copies(files: list[Path], target: int) -> int:
    size = sum(p.stat().st_size for p in files)
    return max(1, -(-target // max(size, 1)))


def _corpus(root: Path, files: list[Path], copies: int, suffix: str = "") -> int:
    written = 0
    for copy in range(copies):
        for index, path in enumerate(files):
            dest = root / f"copy{copy}" / f"{index}" / (path.name + suffix)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
            written += path.stat().st_size
    return written


def _config(path: Path, root: Path, include: str | None) -> Path:
    line = f'include = ["{include}"]\n' if include else ""
    path.write_text(
        f'[server]\nwatch = false\n\n[[sources]]\nname = "code"\nkind = "code"\n'
        f'root = "{root}"\n{line}',
        encoding="utf-8",
    )
    return path


def _in_process(files: list[Path], rounds: int) -> dict:
    texts = [(p.name, p.read_text(encoding="utf-8", errors="replace")) for p in files]
    megabytes = sum(len(t.encode("utf-8")) for _n, t in texts) * rounds / 1e6
    extractor = CodeExtractor()
    started = time.perf_counter()
    extractor.extract(*texts[0])  # the grammar loads and its query compiles once per process
    first_use = time.perf_counter() - started
    started = time.perf_counter()
    blocks = 0
    for _ in range(rounds):
        for name, text in texts:
            blocks += len(extractor.extract(name, text).blocks)
    parsed = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(rounds):
        for name, text in texts:
            window_blocks(name, split_lines(text))
    windows = time.perf_counter() - started
    return {
        "parse_mb_per_s": round(megabytes / parsed, 2),
        "window_mb_per_s": round(megabytes / windows, 2),
        "blocks_per_round": blocks // rounds,
        "first_use_s": round(first_use, 3),
    }


def languages_bench(work: Path, quick: bool, build: Callable[[Path, Path, float], dict]) -> dict:
    """Per language: build MB/s parsed and as windows, their ratio, and extractor MB/s.

    ``build`` is ``bench.run.build`` (a fresh ``index build`` reporting ``mb_per_s``)."""
    target = (256 if quick else 1024) * 1024
    results: dict[str, dict] = {}
    for language, files in language_files().items():
        copies = _copies(files, target)
        base = work / f"lang-{language}"
        parsed_root, window_root = base / "parsed", base / "windows"
        megabytes = _corpus(parsed_root, files, copies) / 1e6
        _corpus(window_root, files, copies, WINDOW_SUFFIX)
        parsed = build(_config(base / "parsed.toml", parsed_root, None), base / "s1", megabytes)
        windows = build(
            _config(base / "windows.toml", window_root, f"*{WINDOW_SUFFIX}"),
            base / "s2",
            megabytes,
        )
        results[language] = {
            "files": len(files),
            "megabytes": round(megabytes, 2),
            "build_mb_per_s": parsed["mb_per_s"],
            "blocks": parsed["blocks"],
            "windows_build_mb_per_s": windows["mb_per_s"],
            "ratio_parsed_to_windows": round(parsed["mb_per_s"] / windows["mb_per_s"], 2)
            if windows["mb_per_s"]
            else None,
            **_in_process(files, 2 if quick else 5),
        }
        shutil.rmtree(base, ignore_errors=True)
    return results


def render_languages(results: dict) -> list[str]:
    if not results:
        return []
    lines = [
        "build per language  (MB/s: index build parsed | as line windows | ratio;"
        " extractor alone parsed | windows; grammar first use s)"
    ]
    for language, r in sorted(results.items()):
        lines.append(
            f"  {language:<11} {r['megabytes']:>5} MB  {r['build_mb_per_s']:>6} |"
            f" {r['windows_build_mb_per_s']:>6} | {r['ratio_parsed_to_windows']!s:>5}x"
            f"   {r['parse_mb_per_s']:>6} | {r['window_mb_per_s']:>7}; {r['first_use_s']:>6}"
        )
    return lines
