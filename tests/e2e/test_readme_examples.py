"""The README's "Using it" examples work against what `make run` serves: this repository.

The commands are read from the README itself, so an example that stops resolving (a renamed
page, a heading that moved) fails here rather than in a new user's first minutes.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

from tests.support.daemon import REPO, running

ASKING = ("search", "get", "related", "flow", "guide")


def readme_examples() -> list[list[str]]:
    """The asking commands of the README's first code block under "Using it", flags dropped."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Using it", 1)[1]
    block = section.split("```", 2)[1]
    examples = []
    for line in block.splitlines():
        line = re.sub(r"\[[^\]]*\]", "", line.split("#  ")[0].split("   #")[0]).strip()
        words = shlex.split(line) if line.startswith("scriptorium ") else []
        if len(words) > 2 and words[1] in ASKING:
            examples.append(words[1:3])
    return examples


def test_the_readme_shows_every_asking_command():
    assert sorted({command for command, _ in readme_examples()}) == sorted(ASKING)


def test_every_readme_example_answers_from_this_repository(tmp_path):
    with running([str(REPO)], tmp_path / "state") as daemon:
        for command, argument in readme_examples():
            done = subprocess.run(
                [
                    sys.executable,
                    "-P",
                    "-m",
                    "scriptorium",
                    command,
                    argument,
                    "--target",
                    daemon.address,
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, (command, argument, done.stderr)
            assert done.stdout.strip(), (command, argument)
            assert "Traceback" not in done.stdout + done.stderr
            if command in ("get", "related", "flow"):
                assert "not_found" not in done.stdout, (command, argument, done.stdout[:500])


def test_the_first_search_example_answers_with_the_page_in_default_mode(tmp_path):
    """Docs and code each get their own candidates: the README's first question finds the
    page that answers it though this repository's code says "search" many times more."""
    (command, argument), *_ = readme_examples()
    assert (command, argument) == ("search", "when does search abstain")
    with running([str(REPO)], tmp_path / "state") as daemon:
        done = subprocess.run(
            [
                sys.executable,
                "-P",
                "-m",
                "scriptorium",
                "search",
                argument,
                "--target",
                daemon.address,
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    locations = [r["location"] for r in json.loads(done.stdout)["results"]]
    assert "docs/ranking#abstention" in locations[:3], locations
    assert locations[0].startswith("docs/"), locations
