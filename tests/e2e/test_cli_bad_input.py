"""Bad input of every kind, through the real ``scriptorium`` command.

Each case runs ``python -m scriptorium ...`` as a user would and must fail the same way: a
non-zero exit, a short message on stderr, and no Python traceback anywhere. Cases that need a
daemon talk to a real one over a small tree; configuration cases run ``serve`` and
``index build`` against real files.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.daemon import CORPUS, Daemon, free_port


def run(
    *args: str, cwd: Path | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scriptorium", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def assert_refused(done: subprocess.CompletedProcess, *expected: str) -> None:
    """Non-zero, a message of a line or two on stderr that says what, and no traceback."""
    shown = f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    assert done.returncode != 0, shown
    assert "Traceback" not in done.stdout + done.stderr, shown
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert 1 <= len(lines) <= 3, shown
    for text in expected:
        assert text in done.stderr, shown


@pytest.fixture(scope="module")
def tree(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-bad-input") / "project"
    (root / "docs").mkdir(parents=True)
    (root / "src").mkdir()
    shutil.copy(CORPUS / "docs/en/docs/tutorial/first-steps.md", root / "docs/first-steps.md")
    shutil.copy(CORPUS / "docs_src/first_steps/tutorial001_py310.py", root / "src/main.py")
    return root


@pytest.fixture(scope="module")
def daemon(tree: Path):
    d = Daemon([str(tree), "--no-watch"], tree.parent / "state")
    d.start()
    yield d
    d.terminate()


# -- input the command line itself refuses (a daemon is running, so none can reach it) ----------

REMOTE_CASES = [
    (("get", ""), "must not be empty"),
    (("get", "   "), "must not be empty"),
    (("search", ""), "must not be empty"),
    (("search", " \t "), "must not be empty"),
    (("guide", ""), "must not be empty"),
    (("related", ""), "must not be empty"),
    (("flow",), "--topic"),
    (("search", "q", "--top-k", "-1"), "--top-k"),
    (("search", "q", "--top-k", "0"), "at least 1"),
    (("search", "q", "--top-k", "abc"), "expected a whole number"),
    (("search", "q", "--token-budget", "1.5"), "--token-budget"),
    (("get", "first-steps", "--max-lines", "x"), "--max-lines"),
    (("search", "q", "--timeout", "soon"), "--timeout"),
    (("search", "q", "--timeout", "-3"), "greater than 0"),
    (("search", "q", "--kinds", "foo"), "unknown kind(s) foo"),
    (("search", "q", "--kinds", "docs,code,pdf"), "pdf"),
    (("search", "q", "--as-of", "yesterday"), "ISO 8601"),
    (("search", "q", "--as-of", "2024-13-45"), "ISO 8601"),
    (("get", "first-steps", "--mode", "whole"), "invalid choice"),
    (("flow", "first-steps", "--style", "long"), "invalid choice"),
    (("search", "q", "--no-such-flag"), "unrecognized arguments"),
    (("search",), "required"),
    (("search", "q", "--tls-ca", "/nonexistent/ca.pem"), "--tls-ca"),
    (("search", "q", "--tls-cert", "/etc/hostname"), "--tls-key"),
]


@pytest.mark.parametrize(("args", "message"), REMOTE_CASES, ids=lambda v: repr(v))
def test_command_line_mistakes_are_one_line(daemon: Daemon, args: tuple, message: str) -> None:
    assert_refused(run(*args, "--target", daemon.address), message)


# -- input only the daemon can judge ------------------------------------------------------------

DAEMON_CASES = [
    (("search", "q", "--mode", "nonsense"), "unknown ranking mode 'nonsense'"),
    (("search", "q", "--source", "nope"), "unknown source"),
    (("get", "nowhere/at-all"), "NOT_FOUND"),
    (("get", "r1.not-a-ref"), "malformed ref_id"),
    (("related", "nowhere/at-all"), "NOT_FOUND"),
    (("flow", "r1.not-a-ref"), "malformed ref_id"),
    (("health", "--service", "nope"), ""),
]


@pytest.mark.parametrize(("args", "message"), DAEMON_CASES, ids=lambda v: repr(v))
def test_what_the_daemon_refuses_is_one_line(daemon: Daemon, args: tuple, message: str) -> None:
    done = run(*args, "--target", daemon.address)
    if args[0] == "health":  # the probe prints the status on stdout, by design
        assert done.returncode == 1 and done.stdout.strip() == "NOT_FOUND"
        assert "Traceback" not in done.stdout + done.stderr
        return
    assert_refused(done, message)


def test_no_daemon_listening_and_unknown_commands() -> None:
    nobody = f"127.0.0.1:{free_port()}"
    for args in (("search", "q"), ("get", "first-steps"), ("sources",)):
        done = run(*args, "--target", nobody, "--timeout", "5")
        assert_refused(done, "UNAVAILABLE")
        assert done.returncode == 2
    assert_refused(run("frobnicate"), "invalid choice: 'frobnicate'")
    assert_refused(run("index", "rebuild"), "invalid choice: 'rebuild'")
    assert_refused(run("state", "purge"), "invalid choice: 'purge'")
    assert_refused(run("state", "prune", "--older-than", "soon"), "number of days")


@pytest.mark.parametrize(
    "command", [("eval",), ("eval", "--suite"), ("mcp",)], ids=lambda v: " ".join(v)
)
def test_the_eval_and_mcp_commands_refuse_a_bad_flag_in_one_line(command: tuple) -> None:
    done = run(*command, "--no-such-flag")
    assert_refused(done, "unrecognized arguments: --no-such-flag", "--help")
    assert done.returncode == 2
    assert "usage:" not in done.stderr


# -- configuration files ------------------------------------------------------------------------


def _docs_and_code(tree: Path, docs: str = "", code: str = "") -> str:
    return (
        f'[[sources]]\nname = "docs"\nkind = "markdown"\nroot = "{tree}"\n{docs}\n'
        f'[[sources]]\nname = "code"\nkind = "code"\nroot = "{tree}"\n{code}\n'
    )


CONFIG_CASES = [
    ("misspelled source key", None, ("", 'incldue = ["*.py"]'), "did you mean 'include'?"),
    ("string for a list", None, ('include = "*.md"', ""), "include must be a list of strings"),
    ("server typo", "[server]\nlisen = '127.0.0.1:1'\n", None, "did you mean 'listen'?"),
    ("server type", "[server]\nwatch = 'yes'\n", None, "watch must be true or false"),
    ("ranking typo", "[ranking]\nstemm = true\n", None, "did you mean 'stem'?"),
    ("ranking type", "[ranking]\nfusion_blend = 'high'\n", None, "fusion_blend must be a number"),
    ("telemetry typo", "[telemetry]\nexportr = 'console'\n", None, "did you mean 'exporter'?"),
    ("unknown table", "[sever]\nwatch = false\n", None, "unknown table [sever]"),
    ("unknown kind", '[[sources]]\nname = "x"\nkind = "mardown"\nroot = "."\n', None, "mardown"),
    (
        "mkdocs key",
        '[[sources]]\nname = "site"\nkind = "mkdocs"\norigin = "http://127.0.0.1:9"\n'
        'sites = ["a"]\ncache_hour = 1\n',
        None,
        "did you mean 'cache_hours'?",
    ),
    (
        "mkdocs value",
        '[[sources]]\nname = "site"\nkind = "mkdocs"\norigin = "ftp://example"\nsites = ["a"]\n',
        None,
        "origin must be an http(s) URL",
    ),
    (
        "peer key",
        '[[sources]]\nname = "up"\nkind = "peer"\ntarget = "127.0.0.1:9"\ntoken_env = "X"\n',
        None,
        "unknown key 'token_env'",
    ),
    (
        "site value",
        '[[sources]]\nname = "s"\nkind = "site"\nstart_urls = ["ftp://example/"]\n',
        None,
        "start_urls must be an http(s) URL",
    ),
    (
        "site without start",
        '[[sources]]\nname = "s"\nkind = "site"\nstart_urls = []\n',
        None,
        "start_urls names no page to start from",
    ),
    (
        "llms_txt key",
        '[[sources]]\nname = "l"\nkind = "llms_txt"\nurl = "http://127.0.0.1:9"\nful = true\n',
        None,
        "did you mean 'full'?",
    ),
    ("invalid TOML", "[server\n", None, "invalid TOML"),
    ("not UTF-8", None, None, "not UTF-8"),
    ("no sources", "[server]\nwatch = false\n", None, "no [[sources]] configured"),
]


@pytest.mark.parametrize(
    ("label", "text", "sources", "message"), CONFIG_CASES, ids=[c[0] for c in CONFIG_CASES]
)
@pytest.mark.parametrize("command", ["serve", "index build"])
def test_configuration_errors_are_one_sentence(
    tmp_path: Path, tree: Path, command: str, label: str, text, sources, message: str
) -> None:
    config = tmp_path / "scriptorium.toml"
    if label == "not UTF-8":
        config.write_bytes(b"\xff\xfe[server]\n")
    else:
        body = text or ""
        wants_sources = sources is not None or text is None or "[[sources]]" not in body
        if wants_sources and "no [[sources]]" not in message:
            body += _docs_and_code(tree, *(sources or ("", "")))
        config.write_text(body, "utf-8")
    args = [*command.split(), "--config", str(config), "--state-dir", str(tmp_path / "state")]
    if command == "serve":
        args += ["--listen", f"127.0.0.1:{free_port()}"]
    done = run(*args)
    assert_refused(done, message)
    assert done.returncode == 2


def test_missing_and_unreadable_configuration_files(tmp_path: Path) -> None:
    for command in ("serve", "index build"):
        missing = run(*command.split(), "--config", str(tmp_path / "absent.toml"))
        assert_refused(missing, "config file not found")
        directory = run(*command.split(), "--config", str(tmp_path))
        assert_refused(directory, "cannot read config file")
    assert_refused(run("serve", str(tmp_path / "no-such-dir")), "not a directory")
    assert_refused(run("serve", "--log-level", "loud"), "--log-level")
    assert_refused(
        run("index", "build", str(tmp_path), "--build-workers", "many"), "--build-workers"
    )
