"""Named points where the fault suite (tests/chaos) may SIGKILL a coordinator worker.

Off in every deployment: `coordinator.settings` fixes `CRASH_POINTS = False`
and no environment variable changes that; only the fault suite's own settings
module (tests/chaos/settings.py) sets it. With it on, `CRASH_POINT_PLAN` names a
JSON file `{"kills": {point: [hit, ...]}}`: the worker dies by SIGKILL on the
listed hits of each point, counted across workers in a locked state file beside
the plan, and every death is logged there first, so a run knows which points it
hit. The plan is drawn from a seed, so a run can be repeated.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
from pathlib import Path

from django.conf import settings

POINTS = (
    "batch.in_transaction",  # the batch's rows written, the transaction still open
    "batch.after_commit",  # committed, the answer not yet sent
    "finish.in_transaction",  # the range marked done, the transaction still open
    "snapshot.put.written",  # the body on disk as a `.part`, not yet recorded
    "snapshot.get.opened",  # the snapshot opened, not a byte sent
)


def crash_point(name: str) -> None:
    """Die here if the fault suite's plan says so; nothing at all otherwise."""
    if not getattr(settings, "CRASH_POINTS", False):
        return
    plan_path = os.environ.get("CRASH_POINT_PLAN")
    if not plan_path:
        return
    plan = Path(plan_path)
    kills = json.loads(plan.read_text())["kills"].get(name, [])
    state_path = plan.with_suffix(".state")
    with state_path.open("a+") as state:
        fcntl.flock(state, fcntl.LOCK_EX)
        state.seek(0)
        text = state.read()
        counts: dict[str, object] = json.loads(text) if text else {}
        hits = counts.get("hits", {})
        assert isinstance(hits, dict)
        hit = int(hits.get(name, 0)) + 1
        hits[name] = hit
        counts["hits"] = hits
        dying = hit in kills
        if dying:
            deaths = counts.get("kills", [])
            assert isinstance(deaths, list)
            deaths.append(name)
            counts["kills"] = deaths
        state.seek(0)
        state.truncate()
        state.write(json.dumps(counts))
        state.flush()
        os.fsync(state.fileno())
    if dying:
        os.kill(os.getpid(), signal.SIGKILL)
