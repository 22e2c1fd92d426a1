"""``seed-node``: the reference seed node agent (also ``manage.py seed_node``).

Parses the options (each also ``SEED_<OPTION>``), starts the workers and waits for
them. Options and exit codes: docs/seed-node.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .assembly import (
    UsageError,
    collect_less_often,
    configure_logging,
    install_signal_handlers,
    log_progress,
    log_timing,
    make_coordinator,
    make_worker,
    open_articles,
    open_source,
    settings_from,
)
from .control import EXIT_UNEXPECTED, EXIT_USAGE, Context, Control, Stats
from .processes import run_processes

log = logging.getLogger("seed_node")

ENV_PREFIX = "SEED_"


MODES = ("ranges", "window", "inspect")
LANES = ("history", "tail")
_YES = ("1", "true", "yes", "on")
_NO = ("0", "false", "no", "off")


def _env(name: str, default: str | None = None) -> str | None:
    """SEED_<NAME>, raw: argparse converts it with the option's type (an empty one is unset)."""
    return os.environ.get(ENV_PREFIX + name) or default


def _env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    # argparse checks choices on the command line only, never on a default.
    value = _env(name, default) or default
    if value not in choices:
        raise UsageError(f"{ENV_PREFIX}{name}={value!r} is not one of {', '.join(choices)}")
    return value


def _env_flag(name: str) -> bool:
    value = _env(name) or "0"
    if value.lower() not in _YES + _NO:
        raise UsageError(
            f"{ENV_PREFIX}{name}={value!r} is neither yes/true/1/on nor no/false/0/off"
        )
    return value.lower() in _YES


def build_parser() -> argparse.ArgumentParser:
    """The options; every default comes from SEED_<OPTION>. Raises UsageError for a bad one."""
    parser = argparse.ArgumentParser(
        prog="seed-node",
        description="Read Usenet overviews for a seed coordinator. Every option can also be "
        "set as an environment variable SEED_<OPTION> (e.g. SEED_COORDINATOR).",
        epilog="Exit codes: 0 clean shutdown, 1 unexpected error, 2 usage or configuration "
        "error, 3 the coordinator refused the token (401).",
    )
    _add_work_options(parser)
    _add_tuning_options(parser)
    return parser


def _add_work_options(parser: argparse.ArgumentParser) -> None:
    """Where the work comes from, how it is read and by how many workers."""
    add = parser.add_argument
    add(
        "--coordinator",
        action="append",
        help="coordinator base URL; repeat it or separate URLs with commas for several "
        "hosts (calls fail over to the next on connection errors and 502/503/504)",
    )
    add(
        "--token-file",
        default=_env("TOKEN_FILE"),
        help="file holding the node token (or SEED_TOKEN with the token itself)",
    )
    add("--mode", choices=MODES, default=_env_choice("MODE", "ranges", MODES))
    add(
        "--inspect-share",
        action="store_true",
        default=_env_flag("INSPECT_SHARE"),
        help="range mode: when no range is handed out, take an inspection before waiting",
    )
    add("--lane", choices=LANES, default=_env_choice("LANE", "history", LANES))
    add("--workers", type=int, default=_env("WORKERS", "1"))
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--news-server",
        default=_env("NEWS_SERVER"),
        help="nntp[s]://user:pass@host:port/?connections=N (the password is never logged)",
    )
    source.add_argument(
        "--relay",
        action="store_true",
        default=_env_flag("RELAY"),
        help="read overviews (and, inspecting, article bodies) through the coordinator's "
        "relay instead of a news server",
    )


# Tuning options: flag, type, default (SEED_<FLAG> overrides it), help.
_TUNING: tuple[tuple[str, Callable[[str], Any], str | None, str | None], ...] = (
    ("--batch-headers", int, "20000", None),
    ("--batch-seconds", float, "30", None),
    ("--snapshot-every", int, "10", None),
    ("--log-interval", float, "60", None),
    ("--heartbeat-seconds", float, "30", None),
    (
        "--fragment-lag",
        int,
        "100000",
        "articles after which an incomplete file is given up as a fragment",
    ),
    ("--max-open", int, "200000", None),
    ("--max-headers-per-second", float, "0", "per worker; 0 means no limit"),
    ("--http-timeout", float, "60", None),
    ("--fetch-seconds", float, "60", "the longest one article body may take (inspections)"),
    ("--max-backoff", float, "60", None),
    ("--work-dir", str, None, "where window snapshots are spooled"),
)


def _add_tuning_options(parser: argparse.ArgumentParser) -> None:
    """Batches, timing, limits and logging; the defaults suit most nodes."""
    add = parser.add_argument
    for flag, kind, default, text in _TUNING:
        env = flag.removeprefix("--").upper().replace("-", "_")
        add(flag, type=kind, default=_env(env, default), help=text)
    add(
        "--exit-when-idle",
        action="store_true",
        default=_env_flag("EXIT_WHEN_IDLE"),
        help="exit 0 when the coordinator has nothing to hand out",
    )
    add(
        "--stats",
        action="store_true",
        default=_env_flag("STATS"),
        help="log at exit where the workers' time went (news server, parsing, coordinator)",
    )
    add("--duplicate-batches", action="store_true", help=argparse.SUPPRESS)  # for tests
    add("--log-level", default=_env("LOG_LEVEL", "INFO"))


def read_token(path: str | None) -> str:
    if path:
        try:
            token = Path(path).read_text().strip()
        except OSError as exc:
            raise UsageError(f"cannot read the token file {path}: {exc.strerror}") from None
    else:
        token = (os.environ.get("SEED_TOKEN") or "").strip()
    if not token:
        raise UsageError("no token: give --token-file PATH (or SEED_TOKEN)")
    return token


def main(argv: Sequence[str] | None = None, control: Control | None = None) -> int:
    """Run the node; returns the exit code. ``control`` lets a caller stop it (tests)."""
    control = control or Control()
    # Signals first: a SIGTERM during start-up is a clean stop too, not a crash.
    previous_handlers = install_signal_handlers(control)
    try:
        return _main(argv, control)
    finally:
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)


def _main(argv: Sequence[str] | None, control: Control) -> int:
    try:
        # A bad SEED_* value: UsageError from the parser's defaults, or argparse's own
        # error when it converts a default with the option's type.
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: 0 for --help, 2 for a usage error
        return int(exc.code or 0)
    except UsageError as exc:
        print(f"seed-node: {exc}", file=sys.stderr)
        return EXIT_USAGE
    configure_logging(args.log_level)
    try:
        return run(args, control)
    except UsageError as exc:
        print(f"seed-node: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception:
        log.exception("seed-node failed")
        return EXIT_UNEXPECTED


def run(args: argparse.Namespace, control: Control) -> int:
    urls = list(args.coordinator or [_env("COORDINATOR") or ""])
    if not any(url.strip() for url in urls):
        raise UsageError("give --coordinator URL (or SEED_COORDINATOR)")
    if not args.relay and not args.news_server:
        raise UsageError("give --news-server URL or --relay")
    if args.relay and args.mode == "window":
        raise UsageError("--relay serves range leases only; window mode needs --news-server")
    if args.inspect_share and args.mode != "ranges":
        raise UsageError("--inspect-share mixes inspections into range mode only")
    token = read_token(args.token_file)
    settings = settings_from(args)
    args.coordinator = urls  # resolved once, for the worker processes too
    coordinator = make_coordinator(args, token, settings, control)
    source, described = open_source(args, coordinator)
    log.info(
        "seed-node: %s mode%s, %s worker%s, coordinator %s, reading from %s",
        args.mode,
        " with inspections" if args.inspect_share else "",
        args.workers,
        " processes" if args.workers > 1 else "",
        ", ".join(coordinator.base_urls),
        described,
    )
    if args.workers > 1:
        source.close()
        coordinator.close()
        code = run_processes(args, token, control)
        log.info("seed-node: stopped (exit %s)", code)
        return code
    collect_less_often()
    stats = Stats()
    articles = open_articles(args, source, coordinator, settings)
    worker = make_worker(args, 1, coordinator, Context(source, settings, control, stats, articles))
    thread = threading.Thread(target=worker.run, name=worker.name, daemon=True)
    thread.start()
    report_progress([thread], stats, args.log_interval)
    source.close()
    coordinator.close()
    log.info("seed-node: stopped (exit %s); %s", control.exit_code, stats.snapshot())
    if args.stats:
        log_timing(stats)
    return control.exit_code


def report_progress(threads: list[threading.Thread], stats: Stats, interval: float) -> None:
    """Wait for the workers, logging throughput every ``interval`` seconds."""
    last = stats.snapshot()
    last_time = time.monotonic()
    next_log = last_time + interval
    while any(thread.is_alive() for thread in threads):
        for thread in threads:
            thread.join(timeout=min(1.0, max(0.05, next_log - time.monotonic())))
        now = time.monotonic()
        if now >= next_log:
            current = stats.snapshot()
            log_progress(last, current, now - last_time)
            last, last_time, next_log = current, now, now + interval


if __name__ == "__main__":
    sys.exit(main())
