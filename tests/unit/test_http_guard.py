"""The Host names and content types the HTTP door answers (scriptorium/http/guard.py)."""

from __future__ import annotations

import pytest

from scriptorium.http.errors import RpcFailure
from scriptorium.http.guard import AllowedHosts, check_content_type, host_name
from scriptorium.settings.config import Settings
from scriptorium.text.quoting import some_of


def hosts(listen: str = "127.0.0.1:8080", allowed: tuple[str, ...] = ()) -> AllowedHosts:
    return AllowedHosts(Settings(http_listen=listen, http_allowed_hosts=list(allowed)))


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost:8080", "localhost"),
        ("LocalHost", "localhost"),
        ("[::1]:80", "[::1]"),
        ("[::1]", "[::1]"),
        ("a.b:port", "a.b:port"),
    ],
)
def test_the_name_of_a_host_header(header, name):
    assert host_name(header) == name


def test_loopback_names_and_the_listen_host_are_answered_on_any_port():
    allowed = hosts("10.1.2.3:8080")
    for header in ("127.0.0.1", "127.0.0.1:1", "localhost", "[::1]:9", "10.1.2.3:8080"):
        assert allowed.allows(header), header
    for header in ("", "evil.example", "localhost.evil.example", "10.1.2.4", "[::2]"):
        assert not allowed.allows(header), header


def test_configured_names_with_and_without_a_port():
    allowed = hosts(allowed=("Docs.Internal", "proxy.internal:8443"))
    assert allowed.allows("docs.internal:1") and allowed.allows("DOCS.INTERNAL")
    assert allowed.allows("proxy.internal:8443")
    assert not allowed.allows("proxy.internal:8444") and not allowed.allows("proxy.internal")
    assert hosts(allowed=("*",)).allows("anything.example")


def test_an_ipv6_listen_host_is_answered_in_brackets():
    assert hosts("[::1]:8080").allows("[::1]:8080")
    assert hosts("[fd00::5]:8080").allows("[fd00::5]:8080")


@pytest.mark.parametrize("declared", ["application/json", "application/json; charset=utf-8"])
def test_json_is_taken(declared):
    check_content_type(declared)
    check_content_type(declared, b"{}")


def test_no_content_type_is_taken_only_with_an_empty_body():
    check_content_type(None)
    check_content_type(None, b"  ")
    with pytest.raises(RpcFailure) as refused:
        check_content_type(None, b"{}")
    assert refused.value.http_status == 415


@pytest.mark.parametrize("declared", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_other_types_are_415(declared):
    with pytest.raises(RpcFailure) as refused:
        check_content_type(declared)
    assert refused.value.http_status == 415
    assert "application/json" in refused.value.message


def test_quoted_names_are_bounded():
    assert some_of(["a", "b"]) == "'a', 'b'"
    many = some_of([f"n{i}" for i in range(100_000)])
    assert many.startswith("'n0', 'n1'") and many.endswith("and 99995 more")
    assert len(some_of(["x" * 10_000] * 3)) < 300


def test_serving_beyond_loopback_without_allowed_hosts_says_which_names_are_answered(caplog):
    from scriptorium.grpc.server import check_http_address

    caplog.set_level("WARNING", logger="scriptorium.grpc.server")
    check_http_address(Settings(http_listen="0.0.0.0:8080", auth_token="t"))
    assert "http_allowed_hosts" in caplog.text
    caplog.clear()
    check_http_address(
        Settings(http_listen="0.0.0.0:8080", auth_token="t", http_allowed_hosts=["a"])
    )
    check_http_address(Settings(http_listen="127.0.0.1:8080"))
    assert "http_allowed_hosts" not in caplog.text
