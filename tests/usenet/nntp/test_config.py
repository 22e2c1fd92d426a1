"""NewsServerConfig.from_url: defaults, options, decoding and a password that never shows."""

from __future__ import annotations

import pytest

from usenet.nntp.config import NewsServerConfig


def test_full_url_is_parsed():
    config = NewsServerConfig.from_url(
        "nntps://user:pass@news.example.com:5563/?connections=8&compression=0&timeout=30&verify=0"
    )
    assert (config.host, config.port, config.tls) == ("news.example.com", 5563, True)
    assert (config.username, config.password) == ("user", "pass")
    assert (config.connections, config.compression, config.timeout, config.verify) == (
        8,
        False,
        30.0,
        False,
    )


@pytest.mark.parametrize(
    ("url", "port", "tls"), [("nntp://h", 119, False), ("nntps://h", 563, True)]
)
def test_default_ports_and_options(url, port, tls):
    config = NewsServerConfig.from_url(url)
    assert (config.port, config.tls, config.connections) == (port, tls, 4)
    assert config.compression and config.verify and config.username is None


def test_credentials_are_url_decoded():
    config = NewsServerConfig.from_url("nntp://us%40er:p%3Ass%2Fw%25rd@h")
    assert (config.username, config.password) == ("us@er", "p:ss/w%rd")


def test_password_never_appears_in_str_or_repr():
    config = NewsServerConfig.from_url("nntps://user:hunter2secret@news.example.com:563")
    assert str(config) == "nntps://user:***@news.example.com:563"
    assert "hunter2secret" not in repr(config)
    assert "hunter2secret" not in str(config)
    assert "hunter2secret" not in f"{config!r} {[config]}"


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("http://h", "must start with nntp:// or nntps://"),
        ("nntp://", "no host"),
        ("nntp://h:notaport", "bad port"),
        ("nntp://h/?connections=many", "connections must be a whole number"),
        ("nntp://h/?connections=0", "at least 1"),
        ("nntp://h/?timeout=-1", "timeout must be positive"),
        ("nntp://h/?compression=maybe", "compression must be 1 or 0"),
        ("nntp://h/?colour=red", "unknown options: colour"),
    ],
)
def test_bad_urls_raise_a_clear_value_error(url, complaint):
    with pytest.raises(ValueError, match=complaint):
        NewsServerConfig.from_url(url)


def test_bad_url_error_masks_the_password():
    with pytest.raises(ValueError) as raised:
        NewsServerConfig.from_url("nntp://user:topsecret@h:port")
    assert "topsecret" not in str(raised.value)
