"""Every figure of issue 27's goals from one command, each beside its baseline.

Runs, one after the other on this machine, bench/bench_call_cost.py (the
coordinator's CPU per call beside a bare WSGI callable and a bare Django view;
batches of 500, 5,000 and 20,000 segments fitted into a fixed cost and a cost
per segment, beside `store_files` in-process; the saturation at the agent's
batch size) and bench/bench_fleet.py at 64 nodes (the lease and batch mix
beside the no-op ping, alternating), prints both whole, then the goals'
lines together. Each ratio's baseline is measured in the same run as its
figure. Then bench/bench_e2e_index.py on INN2, as is and pinned (four agents
beside four bare OVER readers, alternating; `--no-e2e` leaves it out).
Figures and method: docs/performance.md, "The coordinator's cost per call".

Run: .venv/bin/python bench/bench_issue27.py [--profile ping batch_20000]
     [--fleet-seconds 10] [--fleet-nodes 64] [--fleet-rounds 2] [--fleet-groups 400]
     [--fleet-ranges-per-group 150] [--e2e-articles 200000] [--e2e-range-size 50000]
     [--e2e-repeat 2] [--no-e2e] (other arguments go to bench_call_cost.py)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(command: list[str]) -> list[str]:
    """Run a bench, echoing its output; its lines."""
    print(f"$ {' '.join(command)}", flush=True)
    lines = []
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as p:
        assert p.stdout is not None
        for line in p.stdout:
            print(line, end="", flush=True)
            lines.append(line.rstrip("\n"))
    if p.returncode:
        raise SystemExit(f"{command[1]} failed (exit {p.returncode})")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fleet-seconds", type=float, default=10.0)
    parser.add_argument("--fleet-nodes", type=int, default=64)
    parser.add_argument("--fleet-rounds", type=int, default=2)
    parser.add_argument("--fleet-groups", type=int, default=400)
    parser.add_argument("--fleet-ranges-per-group", type=int, default=150)
    parser.add_argument("--e2e-articles", type=int, default=200_000)
    parser.add_argument("--e2e-range-size", type=int, default=50_000)
    parser.add_argument("--e2e-repeat", type=int, default=2)
    parser.add_argument("--no-e2e", action="store_true", help="leave out the INN2 end to end")
    args, rest = parser.parse_known_args()
    started = os.getloadavg()
    cost = run([sys.executable, str(HERE / "bench_call_cost.py"), *rest])
    fleet = run([sys.executable, str(HERE / "bench_fleet.py"),
                 "--nodes", str(args.fleet_nodes), "--think-nodes",
                 "--seconds", f"{args.fleet_seconds:g}", "--rounds", str(args.fleet_rounds),
                 "--groups", str(args.fleet_groups),
                 "--ranges-per-group", str(args.fleet_ranges_per_group)])  # fmt: skip
    e2e = []
    if not args.no_e2e:
        e2e = run([sys.executable, str(HERE / "bench_e2e_index.py"), "--pinned",
                   "--articles", str(args.e2e_articles),
                   "--range-size", str(args.e2e_range_size),
                   "--repeat", str(args.e2e_repeat)])  # fmt: skip
    print("\nIssue 27's goals, this run (load average at the start "
          f"{started[0]:.2f}, at the end {os.getloadavg()[0]:.2f}):")  # fmt: skip
    for line in cost + fleet + e2e:
        if ("goal" in line or line.startswith("measured at")) and not line.startswith("|"):
            print(f"- {line}")


if __name__ == "__main__":
    main()
