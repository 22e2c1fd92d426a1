"""The inspections app's periodic upkeep, registered with seeding's (seeding/maintenance.py):
quiet inspection leases taken back, and planning's next step."""

from __future__ import annotations

from seeding import maintenance

from . import planning
from .services import INSPECTIONS

PLAN_INTERVAL_SECONDS = 60.0  # a new release is planned within a minute
PLAN_LEASE_STEP = 200  # releases a step on the lease path reads (its node waits)


def plan_inspections() -> int:
    step = planning.plan_step()
    return step.planned + step.refreshed


def register_tasks() -> None:
    maintenance.register(
        INSPECTIONS.sweep_task,
        "quiet inspection leases retired",
        INSPECTIONS.retire_quiet,
        every=maintenance.RETIRE_INTERVAL_SECONDS,
    )
    maintenance.register(
        "plan_inspections",
        "inspections planned or refreshed",
        plan_inspections,
        every=PLAN_INTERVAL_SECONDS,
        lease_step=lambda: _step(PLAN_LEASE_STEP),
    )


def _step(limit: int) -> int:
    step = planning.plan_step(limit)
    return step.planned + step.refreshed
