"""The ``related``, ``flow`` and ``guide`` commands and the search flags, against a real daemon."""

from __future__ import annotations

import json
import subprocess
import sys


def cli(daemon, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scriptorium", *args, "--target", daemon.address],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_related_takes_locations_and_prints_reasons(fastapi_daemon):
    done = cli(fastapi_daemon, "related", "tutorial/background-tasks", "--top-k", "4")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("1. ") and "ref: r1." in lines[1]
    # The library class the tutorial's example imports, with the reason that says so.
    ranked = [line.split()[1] for line in lines if line[:1].isdigit()]
    assert any(location.startswith("fastapi/background.py") for location in ranked), ranked
    assert "+ imports" in done.stdout
    as_json = cli(fastapi_daemon, "--format", "json", "related", "tutorial/background-tasks")
    related = json.loads(as_json.stdout)["related"]
    assert related and all(r["reasons"] for r in related)


def test_flow_from_a_location_and_from_a_topic_alone(fastapi_daemon):
    done = cli(fastapi_daemon, "flow", "tutorial/background-tasks#using-backgroundtasks")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1. ")
    assert "from tutorial/background-tasks#using-backgroundtasks" in done.stdout
    assert "confidence: " in done.stdout.splitlines()[-1]
    topic = cli(fastapi_daemon, "--format", "json", "flow", "--topic", "background tasks")
    assert topic.returncode == 0, topic.stderr
    assert json.loads(topic.stdout)["flow"]


def test_guide_prints_docs_samples_and_what_is_not_covered(fastapi_daemon):
    done = cli(fastapi_daemon, "guide", "run periodic cron jobs", "--framework", "fastapi")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("query: run periodic cron jobs")
    assert "\ndocs:\n1. " in out and "\nsample code:\n" in out
    assert "no supporting ref mentions 'periodic', 'cron'" in out
    assert out.rstrip().splitlines()[-1].startswith("confidence: low")


def test_unknown_locations_fail_with_the_resolution(fastapi_daemon):
    done = cli(fastapi_daemon, "related", "nowhere/at-all")
    assert done.returncode == 1
    assert "NOT_FOUND" in done.stderr and "resolution: not_found" in done.stderr


def test_search_flags_reach_the_daemon(fastapi_daemon):
    wide = cli(fastapi_daemon, "--format", "json", "search", "upload files", "--top-k", "5")
    narrow = cli(
        fastapi_daemon,
        "--format",
        "json",
        "search",
        "upload files",
        "--top-k",
        "5",
        "--token-budget",
        "60",
        "--snippet-lines",
        "2",
    )
    assert wide.returncode == narrow.returncode == 0, narrow.stderr
    wide_reply, narrow_reply = json.loads(wide.stdout), json.loads(narrow.stdout)
    assert int(narrow_reply["tokens_used"]) < int(wide_reply["tokens_used"])
    assert all(len(r.get("snippet", "").splitlines()) <= 2 for r in narrow_reply["results"])
