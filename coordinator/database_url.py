"""`DATABASE_URL` and `DATABASE_REPLICA_URL`: libpq's URL, one host or a cluster's several.

`postgres://user:password@h1:5432,h2:5432/name?target_session_attrs=read-write`
names every member of a cluster; libpq tries them in order and keeps the
first that answers as `target_session_attrs` asks (docs/deploy.md, "PostgreSQL
high availability"). The query string takes libpq's connection options
(`connect_timeout`, `keepalives`, `keepalives_idle`, `sslmode`, ...), which go
to the connection as they are. django-environ's reader takes one host, so the
URL is read here; what cannot be read stops the start with a sentence that
names the problem and quotes no part of the URL (it may hold a password, and a
broken URL may have moved a piece of it anywhere).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from psycopg import pq

from usenet.numbers import NotANumber, ascii_digits, whole_number

# The schemes django-environ read as PostgreSQL, the only database.
POSTGRES_SCHEMES = frozenset({"postgres", "postgresql", "pgsql", "psql", "postgis"})
DEFAULT_PORT = "5432"
# Options whose value libpq checks only when it connects: checked at start instead.
CHOICES = {
    "target_session_attrs": (
        "any", "read-write", "read-only", "primary", "standby", "prefer-standby",
    ),
    "sslmode": ("disable", "allow", "prefer", "require", "verify-ca", "verify-full"),
    "keepalives": ("0", "1"),
    "load_balance_hosts": ("disable", "random"),
}  # fmt: skip
SECONDS = {"connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count"}
MILLISECONDS = {"tcp_user_timeout"}
# Named in the URL's parts; in the query string they would be a second spelling.
IN_THE_URL = {"user", "password", "dbname"}
FORM = "postgres://user:password@host:5432,host2:5432/name?option=value"
HEX = frozenset("0123456789abcdefABCDEF")


class UrlProblem(ValueError):
    """What is wrong with the URL, in words that quote none of it."""


def libpq_keywords() -> frozenset[str]:
    return frozenset(option.keyword.decode() for option in pq.Conninfo.get_defaults())


def parse_database_url(url: str) -> dict[str, Any]:
    """Django's database entry for a postgres:// URL of one or several hosts.

    HOST and PORT are libpq's comma lists when there are several hosts (one
    port per host); a single host keeps its port as a number. UrlProblem names
    what cannot be read.
    """
    scheme, slashes, rest = url.strip().partition("://")
    if not slashes or scheme.lower() not in POSTGRES_SCHEMES:
        raise UrlProblem("it does not start with postgres:// (PostgreSQL is the only database)")
    # As libpq reads it: the user and password end at the first @ before any /, so a
    # ? or # in the password needs no encoding (split as a URL, it would move the rest
    # of the password into the query string or a fragment, and into a message).
    end = rest.find("/")
    at = rest.find("@", 0, len(rest) if end < 0 else end)
    userinfo, rest = (rest[:at], rest[at + 1 :]) if at >= 0 else ("", rest)
    user, _, password = userinfo.partition(":")
    try:
        parts = urlsplit("//" + rest)
    except ValueError:  # a broken [IPv6] host
        raise UrlProblem("a host in [brackets] is not closed") from None
    if parts.fragment:
        raise UrlProblem("it holds a # after the hosts (percent-encode it as %23)")
    hostlist = parts.netloc
    name = _decoded(parts.path[1:] if parts.path.startswith("/") else parts.path, "database name")
    if "/" in name or "@" in name:
        raise UrlProblem("its database name holds a / or an @")
    options = _options(parts.query)
    hosts, ports = _hosts(hostlist)
    if "host" in options:  # ?host=/run/postgresql: a socket directory (or hosts) instead
        hosts = options.pop("host").split(",")
    if "port" in options:
        ports = options.pop("port").split(",")
    if not name:
        raise UrlProblem("it names no database (…/name after the hosts)")
    if len(ports) > 1 and len(ports) != len(hosts):
        raise UrlProblem(f"it names {len(hosts)} hosts and {len(ports)} ports")
    for port in ports:
        _port(port, "a port of the query string")
    single = len(hosts) == 1 and len(ports) <= 1
    return {
        "ENGINE": "core.postgres",
        "NAME": name,
        "USER": _decoded(user, "user"),
        "PASSWORD": _decoded(password, "password"),
        "HOST": ",".join(hosts),
        "PORT": (int(ports[0]) if ports and ports[0] else "") if single else ",".join(ports),
        "OPTIONS": options,
    }


def _hosts(hostlist: str) -> tuple[list[str], list[str]]:
    """The hosts and ports of `h1:5432,[::1]:5433,h3`; every host with a port if any has."""
    if not hostlist:
        return [""], []  # libpq's default: the local socket
    hosts, ports = [], []
    for index, entry in enumerate(hostlist.split(","), start=1):
        place = _ordinal(index) + " host"
        if entry.startswith("["):
            host, bracket, rest = entry[1:].partition("]")
            if not bracket or (rest and not rest.startswith(":")):
                raise UrlProblem(f"its {place} opens a [bracket] it does not close right")
            port = rest[1:] if rest else ""
        else:
            host, _, port = entry.partition(":")
            if ":" in port:
                raise UrlProblem(f"its {place} has two ports (write an IPv6 host in [brackets])")
        if not host:
            raise UrlProblem(f"its {place} is empty (hosts are separated by commas)")
        if ascii_digits(host):
            raise UrlProblem(f"its {place} is a number: give each host its port (h1:5432,h2:5433)")
        hosts.append(_decoded(host, place))
        ports.append(_port(port, f"the port of its {place}") if port else "")
    if not any(ports):
        return hosts, []
    return hosts, [port or DEFAULT_PORT for port in ports]


def _decoded(text: str, what: str) -> str:
    """`text` percent-decoded; a % not followed by two hex digits is refused, as libpq
    refuses it (unquote would keep it, and the server would refuse the password)."""
    for index, char in enumerate(text):
        if char == "%" and not all(c in HEX for c in text[index + 1 : index + 3].ljust(2, "-")):
            raise UrlProblem(
                f"its {what} holds a % not followed by two hex digits (write % as %25)"
            )
    return unquote(text)


def _port(text: str, what: str) -> str:
    if text == "":
        return text
    try:
        return str(whole_number(text, low=1, high=65535))
    except NotANumber:
        raise UrlProblem(f"{what} is not a number from 1 to 65535") from None


def _options(query: str) -> dict[str, str]:
    """libpq's options of the query string, each checked that libpq knows it."""
    if not query:
        return {}
    known = libpq_keywords()
    options: dict[str, str] = {}
    for pair in query.split("&"):
        key, equals, value = pair.partition("=")
        if not key or not equals:
            raise UrlProblem("its query string is not a list of option=value")
        # Percent-decoded only: a + is a plus to libpq (sslrootcert=/etc/a+b.pem), not a space.
        key, value = _decoded(key, "query string"), _decoded(value, "query string")
        if key not in known:
            raise UrlProblem(f"its option {key!r} is not one of libpq's connection options")
        if key in IN_THE_URL:
            raise UrlProblem(f"it names {key} in the query string; write it in the URL itself")
        if key in options:
            raise UrlProblem(f"it gives the option {key} twice")
        options[key] = _checked_option(key, value)
    return options


def _checked_option(key: str, value: str) -> str:
    if key in CHOICES and value not in CHOICES[key]:
        raise UrlProblem(f"its {key}={value!r} is not one of " + ", ".join(CHOICES[key]))
    if key in SECONDS | MILLISECONDS:
        try:
            whole_number(value, low=0, high=86_400_000 if key in MILLISECONDS else 86_400)
        except NotANumber as error:
            unit = "milliseconds" if key in MILLISECONDS else "seconds"
            raise UrlProblem(f"its {key}={value!r} is not {error.expected} ({unit})") from None
    return value


def _ordinal(number: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(number, f"{number}th")


def describe_hosts(settings_dict: dict[str, Any]) -> str:
    """`h1:5432, h2:5432/name`: where a connection goes, for a message (no user, no password)."""
    hosts = str(settings_dict.get("HOST") or "the local socket").split(",")
    ports = str(settings_dict.get("PORT") or "").split(",")
    if len(ports) == 1:
        ports = ports * len(hosts)
    places = [f"{host}:{port}" if port else host for host, port in zip(hosts, ports, strict=False)]
    return ", ".join(places) + f"/{settings_dict.get('NAME', '')}"
