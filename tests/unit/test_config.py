"""Settings: TOML parsing, bare paths, defaults and the errors a user sees."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scriptorium.settings.config import ConfigError, Settings, default_state_dir, load_settings
from tests.support.daemon import CORPUS


@pytest.fixture
def tree(fastapi_corpus, tmp_path: Path) -> Path:
    """A small real docs + code tree copied from the FastAPI corpus."""
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "src").mkdir()
    shutil.copy(CORPUS / "docs/en/docs/tutorial/first-steps.md", root / "docs/first-steps.md")
    shutil.copy(CORPUS / "docs_src/first_steps/tutorial001_py310.py", root / "src/main.py")
    return root


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_full_toml_with_relative_paths(tree: Path, tmp_path: Path) -> None:
    config = write(
        tmp_path / "etc" / "scriptorium.toml",
        """
[server]
listen = "127.0.0.1:6000"
state_dir = "state"
grace_seconds = 3
max_concurrent_rpcs = 8
max_receive_message_bytes = 65536
watch = false
watch_interval = 2.5
watch_mode = "poll"
rescan_interval = 60
build_workers = 3
log_level = "debug"
auth_token = "t0ken"

[[sources]]
name = "guide"
kind = "markdown"
root = "../project/docs"
class = "Reference"
url_base = "https://example.test/guide"
include = ["*.md"]

[sources.options]
max_file_bytes = 1000

[[sources]]
name = "app"
kind = "code"
root = "../project/src"
default = true

[ranking]
stem = true
""",
    )
    settings = load_settings(config)

    assert settings.listen == "127.0.0.1:6000"
    assert settings.listen_explicit is True
    assert settings.state_dir == (tmp_path / "etc" / "state").resolve()
    assert settings.grace_seconds == 3.0
    assert settings.max_concurrent_rpcs == 8
    assert settings.max_receive_message_bytes == 65536
    assert settings.watch is False
    assert settings.watch_interval == 2.5
    assert settings.watch_mode == "poll"
    assert settings.rescan_interval == 60.0
    assert settings.build_workers == 3
    assert settings.log_level == "DEBUG"
    assert settings.auth_token == "t0ken"
    assert settings.config_dir == (tmp_path / "etc").resolve()
    assert settings.ranking == {"stem": True}
    assert settings.config_path == config.resolve()

    guide, app = settings.sources
    assert (guide.name, guide.kind, guide.source_class) == ("guide", "markdown", "reference")
    assert guide.root == (tree / "docs").resolve()
    assert guide.url_base == "https://example.test/guide"
    assert guide.options == {"include": ["*.md"], "max_file_bytes": 1000}
    # One source is marked default, so no other becomes default implicitly.
    assert guide.default is False
    assert app.default is True
    assert app.root == (tree / "src").resolve()


def test_cli_flags_override_the_file(tree: Path, tmp_path: Path) -> None:
    config = write(
        tmp_path / "s.toml",
        f'[server]\nlisten = "127.0.0.1:1"\n'
        f'[[sources]]\nname = "d"\nkind = "markdown"\nroot = "{tree}"\n',
    )
    settings = load_settings(config, listen="127.0.0.1:2", state_dir=str(tmp_path / "st"))
    assert settings.listen == "127.0.0.1:2"
    assert settings.state_dir == (tmp_path / "st").resolve()


def test_defaults_without_server_table(tree: Path, cache_home: Path) -> None:
    settings = load_settings(None, [str(tree)])
    assert settings.listen == "127.0.0.1:50051"
    assert settings.listen_explicit is False
    assert settings.grace_seconds == 10.0
    assert settings.max_concurrent_rpcs == 64
    assert settings.max_receive_message_bytes == 4 * 1024 * 1024
    assert settings.watch is True
    assert (settings.watch_mode, settings.rescan_interval) == ("events", 300.0)
    assert settings.build_workers == 0
    assert settings.auth_token is None
    assert settings.tls_cert is None
    assert settings.state_dir is not None
    assert settings.state_dir.parent == cache_home / "scriptorium"
    assert len(settings.state_dir.name) == 12
    int(settings.state_dir.name, 16)


def test_single_bare_path_gives_docs_and_code_sources(tree: Path) -> None:
    settings = load_settings(None, [str(tree)])
    assert [(s.name, s.kind, s.default) for s in settings.sources] == [
        ("docs", "markdown", True),
        ("code", "code", True),
    ]
    assert all(s.root == tree.resolve() for s in settings.sources)


def test_several_bare_paths_are_named_after_their_directories(tmp_path: Path) -> None:
    for rel in ("a/src", "b/src", "b/guide"):
        (tmp_path / rel).mkdir(parents=True)
    settings = load_settings(
        None, [str(tmp_path / "a/src"), str(tmp_path / "b/src"), str(tmp_path / "b/guide")]
    )
    assert [s.name for s in settings.sources] == [
        "src-docs",
        "src-code",
        "src-2-docs",
        "src-2-code",
        "guide-docs",
        "guide-code",
    ]
    assert settings.sources[2].root == (tmp_path / "b/src").resolve()


def test_current_directory_is_the_default_path(tree: Path, monkeypatch) -> None:
    monkeypatch.chdir(tree)
    settings = load_settings()
    assert [s.name for s in settings.sources] == ["docs", "code"]
    assert settings.sources[0].root == tree.resolve()


def test_first_markdown_and_code_sources_become_default(tree: Path, tmp_path: Path) -> None:
    config = write(
        tmp_path / "s.toml",
        f"""
[[sources]]
name = "site"
kind = "mkdocs"
url_base = "https://docs.example.test"
[[sources]]
name = "one"
kind = "markdown"
root = "{tree}"
[[sources]]
name = "two"
kind = "markdown"
root = "{tree}"
[[sources]]
name = "lib"
kind = "code"
root = "{tree}"
""",
    )
    settings = load_settings(config)
    assert {s.name: s.default for s in settings.sources} == {
        "site": False,
        "one": True,
        "two": False,
        "lib": True,
    }
    # A kind without a root (a remote site) is accepted; the registry validates it later.
    assert settings.sources[0].root is None


def test_paths_are_added_to_configured_sources_without_name_clashes(
    tree: Path, tmp_path: Path
) -> None:
    config = write(
        tmp_path / "s.toml",
        f'[[sources]]\nname = "Docs"\nkind = "markdown"\nroot = "{tree / "docs"}"\n',
    )
    settings = load_settings(config, [str(tree)])
    assert [s.name for s in settings.sources] == ["Docs", "project-docs", "project-code"]


def test_state_dir_hash_depends_on_sources_not_their_order(tmp_path: Path) -> None:
    from scriptorium.sources.base import SourceConfig

    a = SourceConfig("a", "markdown", tmp_path / "x")
    b = SourceConfig("b", "code", tmp_path / "y")
    c = SourceConfig("b", "code", tmp_path / "z")
    assert default_state_dir([a, b]) == default_state_dir([b, a])
    assert default_state_dir([a, b]) != default_state_dir([a, c])
    assert Settings(sources=[a, b]).state_dir == default_state_dir([a, b])


def test_auth_token_from_environment(tree: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MY_TOKEN", "from-env")
    config = write(tmp_path / "s.toml", '[server]\nauth_token_env = "MY_TOKEN"\n')
    assert load_settings(config, [str(tree)]).auth_token == "from-env"


def test_tls_paths_resolve_against_the_config_file(tree: Path, tmp_path: Path) -> None:
    config = write(
        tmp_path / "conf/s.toml",
        '[server]\ntls_cert = "c.pem"\ntls_key = "k.pem"\ntls_client_ca = "/abs/ca.pem"\n',
    )
    settings = load_settings(config, [str(tree)])
    assert settings.tls_cert == (tmp_path / "conf/c.pem").resolve()
    assert settings.tls_key == (tmp_path / "conf/k.pem").resolve()
    assert settings.tls_client_ca == Path("/abs/ca.pem")
    assert settings.tls_enabled


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[server]\nlisen = 'x'\n", "unknown key 'lisen' in [server]; did you mean 'listen'?"),
        ("[server]\nmax_concurrent_rpcs = 0\n", "max_concurrent_rpcs must be at least 1"),
        ("[server]\ngrace_seconds = 'soon'\n", "grace_seconds must be a number"),
        ("[server]\nwatch = 'yes'\n", "watch must be true or false"),
        ("[server]\nwatch_mode = 'inotify'\n", 'watch_mode must be "events" or "poll"'),
        ("[server]\nrescan_interval = -1\n", "rescan_interval must be at least 0"),
        ("[server]\nbuild_workers = -1\n", "build_workers must be at least 0"),
        ("[server]\nbuild_workers = 1.5\n", "build_workers must be an integer"),
        ("[server]\nlog_level = 'loud'\n", "log_level must be one of"),
        ("[server]\ntls_cert = 'c.pem'\n", "tls_cert and tls_key must be given together"),
        ("[server]\nauth_token_env = 'NOPE_NOT_SET'\n", "NOPE_NOT_SET, which is not set"),
        (
            "[server]\nauth_token = 'a'\nauth_token_env = 'B'\n",
            "auth_token or auth_token_env, not both",
        ),
        (
            "[[sources]]\nname='a'\nkind='markdown'\nroot='.'\n"
            "[[sources]]\nname='A'\nkind='code'\nroot='.'\n",
            "duplicate source name 'A'",
        ),
        ("[[sources]]\nname='a/b'\nkind='markdown'\nroot='.'\n", "must not contain '/' or '#'"),
        ("[[sources]]\nname='a#b'\nkind='markdown'\nroot='.'\n", "must not contain '/' or '#'"),
        ("[[sources]]\nname='a'\nkind='markdown'\n", "kind 'markdown' needs a root directory"),
        ("[[sources]]\nname='a'\nkind='code'\nroot='.'\nclass='gold'\n", "class must be one of"),
        ("[[sources]]\nkind='code'\nroot='.'\n", "name is required"),
        ("[[sources]]\nname='a'\nroot='.'\n", "kind is required"),
        ("[server]\nhttp_header_timeout_seconds = 0\n", "must be greater than 0"),
        ("[server]\nhttp_body_timeout_seconds = -1\n", "must be greater than 0"),
        ("[server]\nhttp_max_connections = 0\n", "http_max_connections must be at least 1"),
        ("[server]\nhttp_allowed_hosts = 'a'\n", "http_allowed_hosts must be a list of strings"),
        ("[server]\nhttp_allowed_hosts = ['http://a/']\n", "entries must be host names"),
        ("[server]\nhttp_allowed_hosts = ['']\n", "entries must be host names"),
        ("[server]\nlisten = 'x'\n", "no [[sources]] configured"),
        ("[server\n", "invalid TOML"),
    ],
)
def test_configuration_errors(tmp_path: Path, toml: str, message: str) -> None:
    config = write(tmp_path / "bad.toml", toml)
    with pytest.raises(ConfigError) as info:
        load_settings(config)
    assert message in str(info.value)


def test_missing_config_file_and_bad_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(tmp_path / "absent.toml")
    with pytest.raises(ConfigError, match="not a directory"):
        load_settings(None, [str(tmp_path / "absent")])


def test_the_http_doors_guards(tree: Path, tmp_path: Path) -> None:
    source = f'[[sources]]\nname = "d"\nkind = "markdown"\nroot = "{tree}"\n'
    default = load_settings(write(tmp_path / "a.toml", source))
    assert (default.http_header_timeout_seconds, default.http_body_timeout_seconds) == (10, 30)
    assert default.http_max_connections == 256 and default.http_allowed_hosts == []
    server = (
        "[server]\nhttp_header_timeout_seconds = 2\nhttp_body_timeout_seconds = 5\n"
        'http_max_connections = 50\nhttp_allowed_hosts = ["Docs.Internal", "p.internal:8443"]\n'
    )
    given = load_settings(write(tmp_path / "b.toml", server + source))
    assert given.http_header_timeout_seconds == 2.0
    assert isinstance(given.http_header_timeout_seconds, float)
    assert given.http_body_timeout_seconds == 5.0 and given.http_max_connections == 50
    assert given.http_allowed_hosts == ["docs.internal", "p.internal:8443"]


def test_provider_chain_is_first_or_fuse(tree: Path, tmp_path: Path) -> None:
    source = f'[[sources]]\nname = "d"\nkind = "markdown"\nroot = "{tree}"\n'
    default = load_settings(write(tmp_path / "a.toml", source))
    assert default.provider_chain == "first"
    fused = load_settings(
        write(tmp_path / "b.toml", '[server]\nprovider_chain = "fuse"\n' + source)
    )
    assert fused.provider_chain == "fuse"
    with pytest.raises(ConfigError, match="provider_chain"):
        load_settings(write(tmp_path / "c.toml", '[server]\nprovider_chain = "all"\n' + source))


# -- every table refuses keys it does not declare, and wrong types in one sentence ---------------


def _docs_and_code(tree: Path, docs_extra: str = "", code_extra: str = "") -> str:
    return (
        f'[[sources]]\nname = "docs"\nkind = "markdown"\nroot = "{tree}"\n{docs_extra}\n'
        f'[[sources]]\nname = "code"\nkind = "code"\nroot = "{tree}"\n{code_extra}\n'
    )


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            "[server]\nwatch_intervall = 1\n",
            "unknown key 'watch_intervall' in [server]; did you mean 'watch_interval'?",
        ),
        (
            "[telemetry]\nexportr = 'none'\n",
            "unknown key 'exportr' in [telemetry]; did you mean 'exporter'?",
        ),
        (
            "[ranking]\nsurface_bost = 1.2\n",
            "unknown key 'surface_bost' in [ranking]; did you mean 'surface_boost'?",
        ),
        ("[ranking]\nstem = 'yes'\n", '[ranking] stem must be true or false, got a string ("yes")'),
        ("[ranking]\nmax_per_document = 2.5\n", "[ranking] max_per_document must be an integer"),
        (
            "[servr]\nlisten = 'x'\n",
            "unknown table [servr]; did you mean [server]?",
        ),
        ("[server]\nwatch = 'yes'\n", '[server] watch must be true or false, got a string ("yes")'),
        ("[server]\nlisten = 5\n", "[server] listen must be a string, got an integer (5)"),
        ("server = 3\n", "[server] must be a table, got an integer (3)"),
        ("sources = 'docs'\n", "sources must be an array of tables"),
        ("[[sources]]\nname = 3\nkind = 'code'\n", "[[sources]] #1: name is required"),
        (
            "[[sources]]\nname = 'docs'\nkind = 'markdown'\nroot = '.'\ndefault = 'yes'\n",
            '[[sources]] "docs": default must be true or false, got a string ("yes")',
        ),
        (
            "[[sources]]\nname = 'docs'\nkind = ['markdown']\nroot = '.'\n",
            '[[sources]] "docs": kind must be a string, got a list',
        ),
    ],
)
def test_each_table_names_the_key_and_the_nearest_known_one(
    tmp_path: Path, tree: Path, toml: str, message: str
) -> None:
    sources = "" if "[[sources]]" in toml or "sources =" in toml else _docs_and_code(tree)
    config = write(tmp_path / "bad.toml", toml + sources)
    with pytest.raises(ConfigError) as info:
        load_settings(config)
    assert str(info.value) == message or message in str(info.value)
    assert "\n" not in str(info.value)


def _validate(config: Path) -> None:
    """What ``serve`` and ``index build`` check before anything binds: kinds and their keys."""
    from scriptorium.engine.checks import validate_source_kinds
    from scriptorium.plugins import load_registry

    validate_source_kinds(load_settings(config), load_registry())


@pytest.mark.parametrize(
    ("docs_extra", "code_extra", "message"),
    [
        (
            "",
            'incldue = ["*.py"]',
            "unknown key 'incldue' in [[sources]] #2 (\"code\"); did you mean 'include'?",
        ),
        (
            'include = "*.md"',
            "",
            '[[sources]] "docs": include must be a list of strings, got a string ("*.md")',
        ),
        ("max_file_bytes = '1MB'", "", '[[sources]] "docs": max_file_bytes must be an integer'),
        ("[sources.options]\nskipdirs = ['x']", "", "did you mean 'skip_dirs'?"),
        ("class_rules = { 'a.md' = 3 }", "", "class_rules must be a table of strings"),
    ],
)
def test_local_kinds_refuse_unknown_and_mistyped_keys(
    tmp_path: Path, tree: Path, docs_extra: str, code_extra: str, message: str
) -> None:
    config = write(tmp_path / "bad.toml", _docs_and_code(tree, docs_extra, code_extra))
    with pytest.raises(ConfigError) as info:
        _validate(config)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'kind = "mkdocs"\norigin = "http://127.0.0.1:1"\nsites = ["a"]\ncache_hour = 2\n',
            "unknown key 'cache_hour' in [[sources]] #1 (\"site\"); did you mean 'cache_hours'?",
        ),
        (
            'kind = "mkdocs"\norigin = "http://127.0.0.1:1"\nsites = "a"\n',
            '[[sources]] "site": sites must be a list of strings, got a string ("a")',
        ),
        (
            'kind = "peer"\ntarget = "127.0.0.1:1"\ntimeout = 3\n',
            "unknown key 'timeout' in [[sources]] #1 (\"site\"); did you mean 'timeout_seconds'?",
        ),
        (
            'kind = "peer"\ntarget = 50051\n',
            '[[sources]] "site": target must be a string, got an integer (50051)',
        ),
        ('kind = "mkdoc"\n', "unknown kind 'mkdoc'; did you mean 'mkdocs'?"),
    ],
)
def test_plugin_kinds_declare_their_keys(tmp_path: Path, table: str, message: str) -> None:
    config = write(tmp_path / "remote.toml", f'[[sources]]\nname = "site"\n{table}')
    with pytest.raises(ConfigError) as info:
        _validate(config)
    assert message in str(info.value)


def test_declared_keys_accept_the_documented_examples(tmp_path: Path) -> None:
    """The example configurations of the repository pass the same checks they are run with."""
    repo = Path(__file__).resolve().parents[2]
    for example in sorted((repo / "eval").glob("*.toml")):
        settings = load_settings(example)
        from scriptorium.engine.checks import validate_source_kinds
        from scriptorium.plugins import load_registry

        validate_source_kinds(settings, load_registry())
