"""The crash points are inert unless the fault suite's settings turn them on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.crashpoints import crash_point


def plan_killing_at_first_hit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"kills": {"batch.after_commit": [1]}}))
    monkeypatch.setenv("CRASH_POINT_PLAN", str(plan))
    return plan


def test_the_deployed_settings_never_honour_a_crash_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    from coordinator import settings as deployed

    assert deployed.CRASH_POINTS is False
    plan = plan_killing_at_first_hit(tmp_path, monkeypatch)
    crash_point("batch.after_commit")  # would SIGKILL this process if honoured
    assert not plan.with_suffix(".state").exists()


def test_with_the_suites_settings_hits_are_counted_and_unplanned_points_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.CRASH_POINTS = True
    plan = plan_killing_at_first_hit(tmp_path, monkeypatch)
    crash_point("batch.in_transaction")
    crash_point("batch.in_transaction")
    state = json.loads(plan.with_suffix(".state").read_text())
    assert state == {"hits": {"batch.in_transaction": 2}}
