"""The example nginx configuration the deploy kit ships."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "deploy" / "nginx" / "seed-coordinator.conf"
