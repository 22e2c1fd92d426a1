"""The coordinator's environment variables, as the catalog `settings.toml` declares them.

Each variable is parsed by its declared type and checked against its bounds;
a bad value stops the coordinator at start with a sentence that names it.
`make settings-doc` writes docs/settings.md and .env.example from the catalog.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
import re
import sys
import textwrap
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from coordinator.database_url import FORM, UrlProblem, parse_database_url

CATALOG = Path(__file__).with_name("settings.toml")
TYPES = frozenset({"str", "int", "float", "bool", "list", "networks", "path", "choice"})
# What a default may be in the catalog, by type (None: no default).
DEFAULT_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,), "int": (int,), "float": (int, float), "bool": (bool,),
    "list": (list,), "networks": (list,), "path": (str, type(None)), "choice": (str,),
}  # fmt: skip
SPEC_KEYS = frozenset(
    {
        "type",
        "default",
        "min",
        "max",
        "choices",
        "meaning",
        "setting",
        "default_text",
        "read_by",
        "example",
    }
)
# The words django-environ took for true, and their opposites; an empty flag
# was off there and stays off here.
TRUE_WORDS = frozenset({"1", "true", "yes", "on", "y", "ok"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", "n", ""})
# Types whose empty value (`NAME=` in .env or compose) means the default.
EMPTY_IS_DEFAULT = frozenset({"int", "float", "path", "choice"})
# A path may start with the data directory's variable, as .env.example once wrote.
DATA_DIR_PREFIX = re.compile(r"^\$(?:DATA_DIR|\{DATA_DIR\})(?=/|$)")
# A whole value that names another variable: `$OTHER` or `${OTHER}`.
PROXY = re.compile(r"\$(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\})")
# Whole numbers go to PostgreSQL's integer unless the catalog allows more (bytes);
# decimals are seconds, and a wait longer than a year is a typo.
INT_MAX = 2**31 - 1
FLOAT_MAX = 365 * 24 * 3600
LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
WHERE = "Change it in the environment or in .env (docs/settings.md lists every setting)."


MARKDOWN_HEAD = """\
# Settings

<!-- Written by `make settings-doc` from coordinator/settings.toml; edit that file. -->

Every setting comes from the environment, or from a `.env` file (at the
checkout's root; an installed coordinator reads the one in the directory it
starts in); the environment wins. `NAME=$OTHER` reads the variable `OTHER`.
A value of the wrong type or out of bounds stops the coordinator at start
with a sentence naming it. An empty number, path or choice (`NAME=`) means
its default; an empty flag is off and an empty text or list is empty. Flags
take `1`, `true`, `yes` or `on`, and `0`, `false`, `no` or `off`. A relative
path, and one that starts with `$DATA_DIR/`, lies under `DATA_DIR` (a
relative `DATA_DIR` lies under the directory the coordinator starts in)."""
ENV_EXAMPLE_HEAD = """\
# Every variable the coordinator reads, at its default (or an example), commented
# out. Copy to .env (a checkout) or to /etc/seed-coordinator/env (the systemd unit
# in deploy/systemd/) and uncomment what you change. A relative path lies under
# DATA_DIR. docs/settings.md says more; both are written from
# coordinator/settings.toml (`make settings-doc`)."""


class SettingError(ImproperlyConfigured):
    """A variable's value the catalog does not allow; the message says which and why."""


@dataclass(frozen=True)
class Variable:
    """One environment variable of the catalog."""

    name: str
    section: str
    type: str
    meaning: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    default: Any = None
    setting: bool = True
    default_text: str = ""
    read_by: str = ""
    example: str = ""

    def value(self, environ: Mapping[str, str], data_dir: Path | None = None) -> Any:
        """This variable's value in `environ`, or its default; ImproperlyConfigured if bad."""
        raw = environ.get(self.name)
        proxy = None if raw is None or self.type == "path" else PROXY.fullmatch(raw.strip())
        if proxy:
            # `NAME=$OTHER` reads OTHER, as django-environ did (a shared key, a URL).
            other = proxy["name"] or proxy["braced"]
            raw = environ.get(other)
            if raw is None:
                raise self._refuse(proxy[0], f"names the variable {other}, which is not set")
        if raw is None or (raw.strip() == "" and self.type in EMPTY_IS_DEFAULT):
            return self._default(data_dir)
        return self.parse(raw, data_dir)

    def parse(self, raw: str, data_dir: Path | None = None) -> Any:
        if self.type == "str":
            return raw
        if self.type in {"list", "networks"}:
            items = [part.strip() for part in raw.split(",") if part.strip()]
            return self._networks(raw, items) if self.type == "networks" else items
        if self.type == "path":
            return self._path(self._expand(raw.strip()), data_dir)
        if self.type == "bool":
            return self._bool(raw)
        if self.type == "choice":
            return self._choice(raw)
        return self._bounded(self._number(raw), raw)

    def _default(self, data_dir: Path | None) -> Any:
        if self.type == "path" and self.default is not None:
            return self._path(self.default, data_dir)
        if isinstance(self.default, list):
            return list(self.default)
        return self.default

    def _expand(self, text: str) -> str:
        text = DATA_DIR_PREFIX.sub("", text).lstrip("/") if DATA_DIR_PREFIX.match(text) else text
        if "$" in text:
            raise self._refuse(text, "names another variable; write the path itself")
        return text or "."

    def _path(self, text: str, data_dir: Path | None) -> Path:
        try:
            path = Path(text).expanduser()
        except RuntimeError:  # ~user with no such user, or ~ with no HOME
            raise self._refuse(text, "names a home directory that cannot be found") from None
        return path if path.is_absolute() or data_dir is None else data_dir / path

    def _networks(self, raw: str, items: list[str]) -> list[str]:
        for item in items:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise self._refuse(raw, f"holds {item!r}, not an address or a network") from None
        return items

    def _bool(self, raw: str) -> bool:
        word = raw.strip().lower()
        if word in TRUE_WORDS or word in FALSE_WORDS:
            return word in TRUE_WORDS
        raise self._refuse(raw, "must be 1, true, yes or on, or 0, false, no or off")

    def _choice(self, raw: str) -> str:
        for choice in self.choices:
            if raw.strip().lower() == choice.lower():
                return choice
        raise self._refuse(raw, "must be one of " + ", ".join(self.choices))

    def _number(self, raw: str) -> int | float:
        try:
            number: int | float = int(raw.strip()) if self.type == "int" else float(raw)
        except ValueError:
            expected = "a whole number" if self.type == "int" else "a number"
            raise self._refuse(raw, f"must be {expected}") from None
        if not math.isfinite(number):
            raise self._refuse(raw, "must be a finite number")
        return number

    def _bounded(self, number: int | float, raw: str) -> int | float:
        low, high = self.minimum, self.highest
        if low is not None and number < low:
            raise self._refuse(raw, f"must be at least {_number_text(low)}")
        if high is not None and number > high:
            raise self._refuse(raw, f"must be at most {_number_text(high)}")
        return number

    @property
    def highest(self) -> float | None:
        if self.maximum is None and self.type in {"int", "float"}:
            return INT_MAX if self.type == "int" else FLOAT_MAX
        return self.maximum

    def allowed(self) -> str:
        """The values this variable takes, in words (docs/settings.md's `allowed`)."""
        low, high = _number_text(self.minimum), _number_text(self.highest)
        if self.type == "choice":
            return ", ".join(f"`{choice}`" for choice in self.choices)
        if self.type == "bool":
            return "`1` or `0`"
        if self.type in {"str", "list", "networks", "path"}:
            return {
                "str": "text", "list": "a comma-separated list", "path": "a path",
                "networks": "comma-separated addresses or networks (`10.0.0.0/8`)",
            }[self.type]  # fmt: skip
        if low is not None and high is not None:
            return f"from {low} to {high}"
        if low is not None:
            return f"at least {low}"
        return f"at most {high}" if high is not None else ""

    def _refuse(self, raw: str, rule: str) -> SettingError:
        shown = raw.strip() if len(raw.strip()) <= 40 else raw.strip()[:40] + "..."
        return SettingError(
            f"The setting {self.name}={shown!r} {rule.replace('`', '')} "
            f"({plain(self.meaning)}). {WHERE}"
        )


def database_config(url: str, variable: str = "DATABASE_URL") -> dict[str, Any]:
    """Django's database entry for a postgres:// URL of one host or several (a cluster);
    SettingError, quoting none of the URL, if it cannot be read."""
    try:
        return parse_database_url(url)
    except UrlProblem as problem:
        # The URL may hold a password: the sentence quotes none of it.
        raise SettingError(
            f"The setting {variable} is not a postgres:// URL that can be read: {problem} "
            f"({FORM}; percent-encode / : @ # in the password). {WHERE}"
        ) from None


def plain(markdown_text: str) -> str:
    """`markdown_text` without links and code marks, for a message or a comment."""
    text = LINK.sub(lambda link: _doc_name(link[1]), markdown_text)
    return text.replace("`", "").replace("**", "")


def _doc_name(text: str) -> str:
    return f"docs/{text}" if text.endswith(".md") else text


def _number_text(bound: float | None) -> str | None:
    if bound is None:
        return None
    return str(int(bound)) if float(bound).is_integer() else str(bound)


def load(path: Path = CATALOG) -> dict[str, Variable]:
    """Every variable of the catalog at `path`, in its order; ValueError if it is malformed."""
    with path.open("rb") as catalog:
        sections = tomllib.load(catalog)
    variables: dict[str, Variable] = {}
    for key, section in sections.items():
        title = section.get("title")
        if not isinstance(title, str):
            raise ValueError(f"{path}: the section [{key}] has no title")
        for name, spec in section.items():
            if isinstance(spec, dict):
                if name in variables:
                    raise ValueError(f"{path}: {name} stands in two sections")
                variables[name] = _variable(name, title, spec, path)
    return variables


def _variable(name: str, section: str, spec: dict[str, Any], path: Path) -> Variable:
    unknown = set(spec) - SPEC_KEYS
    if unknown or spec.get("type") not in TYPES or not spec.get("meaning"):
        raise ValueError(f"{path}: {name} needs a known type and a meaning (and no {unknown})")
    variable = Variable(
        name=name,
        section=section,
        type=spec["type"],
        meaning=spec["meaning"],
        default=spec.get("default"),
        minimum=spec.get("min"),
        maximum=spec.get("max"),
        choices=tuple(spec.get("choices", ())),
        setting=spec.get("setting", True),
        default_text=spec.get("default_text", ""),
        read_by=spec.get("read_by", ""),
        example=spec.get("example", ""),
    )
    wrong_flag = isinstance(variable.default, bool) != (variable.type == "bool")
    if wrong_flag or not isinstance(variable.default, DEFAULT_TYPES[variable.type]):
        raise ValueError(f"{path}: {name}'s default is not a {variable.type}")
    if variable.type == "choice" and variable.default not in variable.choices:
        raise ValueError(f"{path}: {name}'s default is not one of its choices")
    if variable.type in {"int", "float"} and variable.default is not None:
        try:
            variable._bounded(spec["default"], str(spec["default"]))
        except SettingError:
            raise ValueError(f"{path}: {name}'s default is out of its bounds") from None
    return variable


class Environment:
    """The catalog's variables read from one environment (os.environ by default)."""

    def __init__(self, environ: Mapping[str, str] | None = None, path: Path = CATALOG):
        self.environ = os.environ if environ is None else environ
        self.variables = load(path)

    def __call__(self, name: str, *, data_dir: Path | None = None) -> Any:
        """The value of `name`, which the catalog must declare (KeyError otherwise)."""
        return self.variables[name].value(self.environ, data_dir)

    def settings(self, data_dir: Path) -> dict[str, Any]:
        """The Django settings named after their variables, with their values."""
        return {
            variable.name: variable.value(self.environ, data_dir)
            for variable in self.variables.values()
            if variable.setting
        }


def markdown(variables: Mapping[str, Variable]) -> str:
    """docs/settings.md: a table per section of the catalog."""
    lines = [MARKDOWN_HEAD]
    for section, members in _sections(variables):
        lines += ["", f"## {section}", "", "| variable | default | allowed | meaning |"]
        lines.append("|---|---|---|---|")
        for variable in members:
            row = (f"`{variable.name}`", _default_text(variable), variable.allowed())
            lines.append("| " + " | ".join((*row, variable.meaning)) + " |")
    return "\n".join(lines) + "\n"


def _sections(variables: Mapping[str, Variable]) -> Iterator[tuple[str, list[Variable]]]:
    titles: dict[str, list[Variable]] = {}
    for variable in variables.values():
        titles.setdefault(variable.section, []).append(variable)
    yield from titles.items()


def _default_text(variable: Variable) -> str:
    default = variable.default
    if variable.default_text:
        return variable.default_text
    if variable.type == "bool":
        return "`1`" if default else "`0`"
    if variable.type == "path":
        return f"`DATA_DIR/{default}`"
    if variable.type in {"list", "networks"}:
        return f"`{','.join(default)}`" if default else "empty"
    return f"`{default}`" if default != "" else "empty"


def env_example(variables: Mapping[str, Variable]) -> str:
    """.env.example: every variable, commented out, at its default or an example."""
    lines = [ENV_EXAMPLE_HEAD]
    for section, members in _sections(variables):
        title = section.split(" (")[0]
        lines += ["", f"# --- {title} " + "-" * max(3, 76 - len(title))]
        for variable in members:
            about = plain(variable.meaning)
            about = about[:1].upper() + about[1:]
            default = plain(variable.default_text)
            if default.startswith("unset"):
                about += f". {default[:1].upper()}{default[1:]}"
            elif default:
                about += f". Default: {default}"
            lines += textwrap.wrap(about, width=80, initial_indent="# ", subsequent_indent="# ")
            lines += [f"# {variable.name}={_env_text(variable)}", ""]
        lines.pop()
    return "\n".join(lines) + "\n"


def _env_text(variable: Variable) -> str:
    default = variable.example or variable.default
    if default is None:
        return ""
    if isinstance(default, bool):
        return "1" if default else "0"
    if isinstance(default, list):
        return ",".join(default)
    return str(default)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", type=Path, help="write docs/settings.md here")
    parser.add_argument("--env-example", type=Path, help="write .env.example here")
    args = parser.parse_args(argv)
    variables = load()
    if args.markdown:
        args.markdown.write_text(markdown(variables), encoding="utf-8")
    if args.env_example:
        args.env_example.write_text(env_example(variables), encoding="utf-8")
    if not (args.markdown or args.env_example):
        sys.stdout.write(markdown(variables))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
