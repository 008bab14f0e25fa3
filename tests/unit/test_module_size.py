"""No module over 500 lines unless its first lines say why it stays whole.

A long module is usually several jobs; one that is not says so in its docstring ("Kept whole
past 500 lines: ..."), where the next reader looks first. Generated stubs are exempt.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIMIT = 500
NOTE = "kept whole past 500 lines"
HEAD_LINES = 10
# Being reworked on another branch at the time of writing: split or noted there.
PENDING: set[str] = set()


def _modules() -> list[Path]:
    found = [*(REPO / "daemon").rglob("*.py"), *(REPO / "plugins").rglob("*.py")]
    return sorted(p for p in found if "_pb2" not in p.name)


def test_long_modules_say_why_they_stay_whole():
    unexplained = []
    for path in _modules():
        lines = path.read_text(encoding="utf-8").splitlines()
        rel = path.relative_to(REPO).as_posix()
        if len(lines) <= LIMIT or rel in PENDING:
            continue
        if NOTE not in " ".join(lines[:HEAD_LINES]).lower():
            unexplained.append(f"{rel} ({len(lines)} lines)")
    assert not unexplained, "split these by job, or say why in their first lines: " + ", ".join(
        unexplained
    )


def test_the_command_line_is_split_by_job():
    cli = REPO / "daemon/scriptorium/cli"
    assert {p.name for p in cli.glob("*.py")} >= {
        "__init__.py",
        "parser.py",
        "output.py",
        "remote.py",
        "local.py",
    }
