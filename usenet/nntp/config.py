"""Where a news server is and how to talk to it, parsed from one URL.

`nntps://user:pass@news.example.com:563/?connections=8&compression=0&timeout=30&verify=0`
is the single setting an operator writes; everything printable about it
masks the password so that it cannot leak into logs or error reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

from usenet.numbers import whole_number

DEFAULT_PORTS = {"nntp": 119, "nntps": 563}
_TRUE_WORDS = {"1", "true", "yes", "on"}
_FALSE_WORDS = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class NewsServerConfig:
    host: str
    port: int = 119
    tls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    connections: int = 4
    compression: bool = True
    timeout: float = 30.0
    connect_timeout: float = 10.0
    verify: bool = True
    ca_file: str | None = None

    @classmethod
    def from_url(cls, url: str) -> NewsServerConfig:
        """Parse `nntp://` or `nntps://` URLs; raise ValueError saying what is wrong."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise ValueError(f"News server URL has a bad port: {_mask_url(url)}") from exc
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS:
            raise ValueError(
                f"News server URL must start with nntp:// or nntps://, got {scheme or 'no'} scheme."
            )
        if not parts.hostname:
            raise ValueError("News server URL has no host name.")
        options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        unknown = set(options) - {"connections", "compression", "timeout", "verify", "ca_file"}
        if unknown:
            raise ValueError(f"News server URL has unknown options: {', '.join(sorted(unknown))}.")
        connections = _parse_int(options.get("connections", "4"), "connections")
        if connections < 1:
            raise ValueError("News server URL option connections must be at least 1.")
        timeout = _parse_float(options.get("timeout", "30"), "timeout")
        return cls(
            host=parts.hostname,
            port=port or DEFAULT_PORTS[scheme],
            tls=scheme == "nntps",
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password is not None else None,
            connections=connections,
            compression=_parse_bool(options.get("compression", "1"), "compression"),
            timeout=timeout,
            connect_timeout=min(timeout, 10.0),
            verify=_parse_bool(options.get("verify", "1"), "verify"),
            ca_file=options.get("ca_file"),
        )

    @property
    def masked_url(self) -> str:
        scheme = "nntps" if self.tls else "nntp"
        credentials = ""
        if self.username is not None:
            credentials = self.username + (":***" if self.password is not None else "") + "@"
        return f"{scheme}://{credentials}{self.host}:{self.port}"

    def __repr__(self) -> str:
        return (
            f"NewsServerConfig({self.masked_url!r}, connections={self.connections}, "
            f"compression={self.compression}, timeout={self.timeout}, verify={self.verify})"
        )

    def __str__(self) -> str:
        return self.masked_url


def _mask_url(url: str) -> str:
    # Used before parsing succeeded, so mask anything between ':' and '@' by hand.
    head, at, tail = url.rpartition("@")
    if not at:
        return url
    scheme, sep, userinfo = head.partition("://")
    user = userinfo.split(":", 1)[0]
    return f"{scheme}{sep}{user}:***@{tail}"


def _parse_int(text: str, name: str) -> int:
    try:
        return whole_number(text)
    except ValueError:  # NotANumber: not ASCII digits
        raise ValueError(f"News server URL option {name} must be a whole number.") from None


def _parse_float(text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"News server URL option {name} must be a number of seconds.") from None
    if value <= 0:
        raise ValueError(f"News server URL option {name} must be positive.")
    return value


def _parse_bool(text: str, name: str) -> bool:
    lowered = text.lower()
    if lowered in _TRUE_WORDS:
        return True
    if lowered in _FALSE_WORDS:
        return False
    raise ValueError(f"News server URL option {name} must be 1 or 0.")
