"""End-to-end indexing speed on a real news server (INN2), beside bare OVER readers.

Feeds ``--articles`` binary posts into one INN2 group in bulk (a pipelined
TAKETHIS stream, timed), plans the group on a real coordinator (``serve`` under
gunicorn, embedded PostgreSQL, a database of its own) and lets ``--agents``
seed-node agents index it, each with one worker and one news-server connection,
``--stats`` on. In the same run, as many bare readers (usenet's NNTP client
reading OVER over the same planned ranges, one process each, lines discarded)
give the baseline. Prints headers/s of both, their ratio, the CPU per header
of each process tree with the cores each run kept busy (the ratio of rates is
the inverse ratio of CPU per header only when both runs got as many cores),
and where the agents' time went (news server, parsing, coordinator). Not a test: docs/performance.md
("End-to-end indexing on INN2") has the figures.

``--pinned`` adds, to each repeat, a run with the coordinator (gunicorn) and
PostgreSQL pinned to one core and INN, the agents and the bare readers to the
other (``sched_setaffinity``, as ``taskset`` does), as a deployment with the
coordinator on its own host would be; every row says how it ran and the load
average around it.

``--profile DIR`` samples the first agent (every thread, idle ones too) and
the coordinator's gunicorn workers (on CPU only) with py-spy (``pip install
py-spy``) during each agents' run, keeps the raw stacks in DIR and prints
where the samples fell.

Run: ``.venv/bin/python bench/bench_e2e_index.py [--articles 200000] [--repeat 2] [--pinned]``
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import resource
import signal
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from common import flame_summary, py_spy, size_parser

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


def children_cpu() -> float:
    """CPU time of this process's reaped children (agents, bare readers, py-spy)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pin(pids: list[int], cpus: set[int]) -> None:
    """Every thread of ``pids`` onto ``cpus`` (children forked later inherit it)."""
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                os.sched_setaffinity(int(task.name), cpus)
            except (ProcessLookupError, PermissionError):
                pass


class Placement:
    """Where the coordinator's processes and the news side run: all cores, or one each."""

    def __init__(self, fleet, inn) -> None:  # type: ignore[no-untyped-def]
        self.fleet, self.inn = fleet, inn
        self.cpus = sorted(os.sched_getaffinity(0))

    def coordinator_roots(self) -> set[int]:
        (data_dir,) = self.fleet.sql("SHOW data_directory")[0]
        postmaster = Path(data_dir, "postmaster.pid").read_text().split()[0]
        return {self.fleet.gunicorn.pid, int(postmaster)}

    def news_roots(self) -> set[int]:
        return {process.pid for process in (self.inn._innd, self.inn._nnrpd) if process}

    def cpu(self) -> tuple[float, float]:
        """CPU seconds so far of the news server's processes and of the coordinator's."""
        from simulator.fleet import cpu_seconds

        return cpu_seconds(*self.news_roots()), cpu_seconds(*self.coordinator_roots())

    def apply(self, pinned: bool) -> None:
        everywhere = set(self.cpus)
        coordinator, news = ({self.cpus[0]}, {self.cpus[-1]}) if pinned else (everywhere,) * 2
        from simulator.fleet import process_tree

        pin(process_tree(*self.coordinator_roots()), coordinator)
        pin(process_tree(*self.news_roots()), news)
        os.sched_setaffinity(0, news)  # the agents and bare readers it starts inherit it


def run_agents(
    fleet, url: str, agents: int, run: int, profile: Path | None = None
) -> tuple[float, int, dict[str, float], float]:  # type: ignore[no-untyped-def]
    """Re-plan the group, run the agents to idle; (seconds, headers, summed --stats,
    the agents' CPU seconds)."""
    # The catalog keeps the files of earlier runs: a rerun's batches upsert them.
    fleet.sql(
        "UPDATE seed_range SET status = 'queued', next_id = start_id, node_id = NULL, "
        "done_at = NULL, headers = 0, files = 0, fragments = 0 RETURNING id"
    )
    names = [f"bench-{run}-{number}" for number in range(agents)]
    for name in names:
        fleet.issue_token(name)  # a manage.py process each: before the clock starts
    started, cpu = time.perf_counter(), children_cpu()
    for name in names:
        fleet.start_agent(
            name,
            *("--mode", "ranges", "--news-server", f"{url}/?connections=1"),
            *("--exit-when-idle", "--stats", "--batch-seconds", "30", "--heartbeat-seconds", "5"),
        )
    samplers = []
    if profile is not None:
        samplers = [
            py_spy(profile / f"agent-{run}.txt", fleet.agents[names[0]].pid, "--idle", "--threads"),
            py_spy(profile / f"coordinator-{run}.txt", fleet.gunicorn.pid, "--subprocesses"),
        ]
    for name in names:
        code = fleet.agents[name].wait(timeout=1800)
        assert code == 0, fleet.log(f"{name}.log")
    seconds, cpu = time.perf_counter() - started, children_cpu() - cpu
    for sampler in samplers:
        sampler.send_signal(signal.SIGINT)  # py-spy writes what it sampled and exits
        sampler.wait(timeout=60)
    stats: dict[str, float] = {}
    for name in names:
        for label, value in _STAT.findall(fleet.log(f"{name}.log")):
            stats[label] = stats.get(label, 0.0) + float(value.replace(",", ""))
    return seconds, int(stats.get("headers read", 0)), stats, cpu


def main() -> None:
    # Ranges of 50,000 articles: several of the agent's batches each, and a range
    # for each agent (the planner's default, PLAN_RANGE_SIZE, is larger still).
    parser = size_parser(__doc__, articles=200_000, agents=4, range_size=50_000, repeat=2)
    parser.add_argument("--profile", type=Path, help="py-spy the agents' runs into this directory")
    parser.add_argument(
        "--pinned",
        action="store_true",
        help="also run with the coordinator and PostgreSQL on one core, INN and the agents "
        "on the other",
    )
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "bench"))
    from django_setup import setup

    setup("bench_e2e_index", private=True)  # PostgreSQL is metered and pinned: its own cluster
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
            report(fleet, inn.url, spans, args, Placement(fleet, inn))
        finally:
            fleet.stop()


def report(
    fleet, url: str, spans: list[tuple[int, int]], args: argparse.Namespace, placement
) -> None:  # type: ignore[no-untyped-def]
    print(f"{len(spans)} ranges of up to {args.range_size:,} articles, {args.agents} of each")
    if args.pinned:
        print(
            f"pinned: coordinator and PostgreSQL on CPU {placement.cpus[0]}, "
            f"INN, agents and bare readers on CPU {placement.cpus[-1]}"
        )
    print(
        "| run | placement | load average | bare OVER readers, headers/s "
        "| agents via serve, headers/s | ratio |"
    )
    print("|---|---|---|---:|---:|---:|")
    totals: dict[str, dict[str, float]] = {}
    cpu_rows: list[tuple[int, str, list[float], tuple[float, float]]] = []
    ratios: dict[str, list[float]] = {}
    for run in range(1, args.repeat + 1):
        for pinned in (False, True) if args.pinned else (False,):
            placement.apply(pinned)
            load = os.getloadavg()[0]
            (news, coordinator), readers = placement.cpu(), children_cpu()
            bare_seconds, lines = run_bare(url, spans, args.agents)
            (news_bare, _), readers = placement.cpu(), children_cpu() - readers
            profile = None
            if args.profile:
                profile = args.profile / ("pinned" if pinned else "as-is")
                profile.mkdir(parents=True, exist_ok=True)
            run_agents_at = run_agents(fleet, url, args.agents, run, profile)
            agent_seconds, headers, stats, agents = run_agents_at
            news_agents, coordinator_after = placement.cpu()
            assert headers == lines, (headers, lines)
            bare_rate, agent_rate = lines / bare_seconds, headers / agent_seconds
            where = "pinned" if pinned else "as is"
            per_header = [
                1e6 * seconds / lines
                for seconds in (
                    news_bare - news,
                    readers,
                    news_agents - news_bare,
                    agents,
                    coordinator_after - coordinator,
                )
            ]
            # Cores busy over each run: the rate is the cores it got ÷ its CPU per header,
            # so agents ÷ bare is their CPU ratio only when both runs got as many.
            bare_cores = ((news_bare - news) + readers) / bare_seconds
            agent_cores = sum(per_header[2:]) * headers / 1e6 / agent_seconds
            cpu_rows.append((run, where, per_header, (bare_cores, agent_cores)))
            print(
                f"| {run} | {where} | {load:.1f}-{os.getloadavg()[0]:.1f} | {bare_rate:,.0f} "
                f"| {agent_rate:,.0f} | {agent_rate / bare_rate:.2f} |",
                flush=True,
            )
            ratios.setdefault(where, []).append(agent_rate / bare_rate)
            for label, value in stats.items():
                kind = totals.setdefault(where, {})
                kind[label] = kind.get(label, 0.0) + value
    placement.apply(False)
    print(
        "\nCPU per header, µs: INN while the bare readers read | the bare readers | "
        "INN while the agents read | the agents"
        + " | the coordinator (gunicorn and PostgreSQL) while they read"
    )
    for run, where, figures, (bare_cores, agent_cores) in cpu_rows:
        print(
            f"  run {run}, {where:6}: "
            + " | ".join(f"{value:6.1f}" for value in figures)
            + f"   (cores busy: bare run {bare_cores:.2f}, agents' run {agent_cores:.2f})"
        )
    for where, spent in totals.items():
        print(f"\nwhere the agents' time went ({where}; all runs, all agents, seconds and share):")
        times(spent)
    print()
    for where, found in ratios.items():
        print(
            f"{args.agents} agents ÷ {args.agents} bare OVER readers, {where}: "
            f"median {statistics.median(found):.2f} of runs "
            + ", ".join(f"{ratio:.2f}" for ratio in found)
            + " (goal ≥ 0.7)"
        )
    if args.profile:
        for where in totals:
            folder = args.profile / where.replace(" ", "-")
            for path in sorted(folder.glob("agent-*.txt")):
                print(f"\npy-spy of agent 1's worker thread, {where} ({path}; idle included):")
                print(flame_summary(path.read_text(), in_worker, top=14))
            for path in sorted(folder.glob("coordinator-*.txt")):
                print(
                    f"\npy-spy of the coordinator's gunicorn workers, {where} ({path}; recorded without --idle):"
                )
                print(flame_summary(path.read_text(), top=14))


def in_worker(frames: list[str]) -> bool:
    """A sample of the agent's worker thread (seed_node/worker.py), not its reporter's."""
    return any("worker.py" in frame for frame in frames)


def times(totals: dict[str, float]) -> None:
    busy = sum(v for k, v in totals.items() if k != "headers read" and "beside" not in k)
    for label, value in totals.items():
        if label != "headers read":
            share = "" if "beside" in label else f" {100 * value / busy:5.1f}%"
            print(f"  {label:56} {value:9.2f}s{share}")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    main()
