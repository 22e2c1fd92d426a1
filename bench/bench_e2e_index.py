"""End-to-end indexing speed on a real news server (INN2), beside bare OVER readers.

Feeds ``--articles`` binary posts into one INN2 group in bulk (a pipelined
TAKETHIS stream, timed), plans the group on a real coordinator (``serve`` under
gunicorn, embedded PostgreSQL, a database of its own) and lets ``--agents``
seed-node agents index it, each with one worker and one news-server connection,
``--stats`` on. In the same run, as many bare readers (usenet's NNTP client
reading OVER over the same planned ranges, one process each, lines discarded)
give the baseline. Prints headers/s of both, their ratio, and where the agents'
time went (news server, parsing, coordinator). Not a test: docs/performance.md
("End-to-end indexing on INN2") has the figures.

Run: ``.venv/bin/python bench/bench_e2e_index.py [--articles 200000] [--repeat 2]``
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import signal
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from common import size_parser

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GROUP = "alt.binaries.bench.e2e"
_STAT = re.compile(r"stats: ([^:]+): ([\d.]+)")


def articles(count: int):  # type: ignore[no-untyped-def]
    """``count`` segments of 20-part files, dated over the last few days."""
    from tests.support.usenet import Article

    start = datetime.now(UTC) - timedelta(days=5)
    for number in range(count):
        file_no, part = divmod(number, 20)
        poster = f"poster{file_no % 37}@example.com"
        yield Article(
            message_id=f"<bench.{number}@e2e.example>",
            date=start + timedelta(seconds=number),
            newsgroups=(GROUP,),
            headers=(
                ("From", poster),
                ("Subject", f'[{file_no}/9999] - "release{file_no}.part.rar" yEnc ({part + 1}/20)'),
            ),
            body=b"=ybegin part=1 line=128 size=10 name=x\r\nxxxxxxxxxx\r\n=yend size=10\r\n",
        )


def bare_reader(url: str, spans: list[tuple[int, int]], queue) -> None:  # type: ignore[no-untyped-def]
    from usenet.nntp import NewsServerConfig, NNTPClient

    config = NewsServerConfig.from_url(url)
    lines = 0
    with NNTPClient.from_config(config) as client:
        client.connect()
        client.group(GROUP)
        for first, last in spans:
            for start in range(first, last + 1, 50_000):  # the agent's OVER chunk
                for _line in client.over(start, min(start + 49_999, last)):
                    lines += 1
    queue.put(lines)


def run_bare(url: str, spans: list[tuple[int, int]], readers: int) -> tuple[float, int]:
    """``readers`` processes reading OVER of the spans dealt round-robin; (seconds, lines)."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    shares = [spans[index::readers] for index in range(readers)]
    processes = [context.Process(target=bare_reader, args=(url, share, queue)) for share in shares]
    started = time.perf_counter()
    for process in processes:
        process.start()
    total = sum(queue.get() for _ in processes)
    for process in processes:
        process.join()
    return time.perf_counter() - started, total


def run_agents(fleet, url: str, agents: int, run: int) -> tuple[float, int, dict[str, float]]:  # type: ignore[no-untyped-def]
    """Re-plan the group, run the agents to idle; (seconds, headers, summed --stats)."""
    # The catalog keeps the files of earlier runs: a rerun's batches upsert them.
    fleet.sql(
        "UPDATE seed_range SET status = 'queued', next_id = start_id, node_id = NULL, "
        "done_at = NULL, headers = 0, files = 0, fragments = 0 RETURNING id"
    )
    names = [f"bench-{run}-{number}" for number in range(agents)]
    for name in names:
        fleet.issue_token(name)  # a manage.py process each: before the clock starts
    started = time.perf_counter()
    for name in names:
        fleet.start_agent(
            name,
            *("--mode", "ranges", "--news-server", f"{url}/?connections=1"),
            *("--exit-when-idle", "--stats", "--batch-seconds", "30", "--heartbeat-seconds", "5"),
        )
    for name in names:
        code = fleet.agents[name].wait(timeout=1800)
        assert code == 0, fleet.log(f"{name}.log")
    seconds = time.perf_counter() - started
    stats: dict[str, float] = {}
    for name in names:
        for label, value in _STAT.findall(fleet.log(f"{name}.log")):
            stats[label] = stats.get(label, 0.0) + float(value.replace(",", ""))
    return seconds, int(stats.get("headers read", 0)), stats


def main() -> None:
    parser = size_parser(__doc__, articles=200_000, agents=4, range_size=10_000, repeat=2)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "bench"))
    from django_setup import setup

    setup("bench_e2e_index")
    from tests.support.fleet import Fleet, fresh_database
    from tests.support.inn2 import InnServer

    with InnServer() as inn, fresh_database() as (db_url, conninfo):
        inn.create_group(GROUP)
        fed = inn.post_articles(None, articles(args.articles), batch=500)
        assert fed.accepted == args.articles, list(fed.refused.items())[:3]
        print(
            f"fed {fed.accepted:,} articles into INN2 (TAKETHIS stream, 500 pipelined) "
            f"in {fed.seconds:.1f}s: {fed.rate:,.0f} articles/s"
        )
        workdir = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
        fleet = Fleet(db_url, conninfo, workdir, news_server_url=inn.url)
        try:
            fleet.start()
            fleet.python(
                "from indexer.models import Group\nGroup.objects.get_or_create(name=sys.argv[1])\n",
                GROUP,
            )
            fleet.manage("plan_seed", GROUP, "--size", str(args.range_size))
            spans = [
                (start, end)
                for start, end in fleet.sql(
                    "SELECT start_id, end_id FROM seed_range ORDER BY start_id"
                )
            ]
            report(fleet, inn.url, spans, args)
        finally:
            fleet.stop()


def report(fleet, url: str, spans: list[tuple[int, int]], args: argparse.Namespace) -> None:  # type: ignore[no-untyped-def]
    print(f"{len(spans)} ranges of up to {args.range_size:,} articles, {args.agents} of each")
    print("| run | bare OVER readers, headers/s | agents via serve, headers/s | ratio |")
    print("|---|---:|---:|---:|")
    totals: dict[str, float] = {}
    for run in range(1, args.repeat + 1):
        bare_seconds, lines = run_bare(url, spans, args.agents)
        agent_seconds, headers, stats = run_agents(fleet, url, args.agents, run)
        assert headers == lines, (headers, lines)
        bare_rate, agent_rate = lines / bare_seconds, headers / agent_seconds
        print(f"| {run} | {bare_rate:,.0f} | {agent_rate:,.0f} | {agent_rate / bare_rate:.2f} |")
        for label, value in stats.items():
            totals[label] = totals.get(label, 0.0) + value
    busy = sum(v for k, v in totals.items() if k != "headers read" and "beside" not in k)
    print("\nwhere the agents' time went (all runs, all agents, seconds and share):")
    for label, value in totals.items():
        if label != "headers read":
            share = "" if "beside" in label else f" {100 * value / busy:5.1f}%"
            print(f"  {label:56} {value:9.2f}s{share}")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    main()
