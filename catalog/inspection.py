"""TEMPORARY STAND-IN for feat/insp-apply's catalog/inspection.py (issue 26).

feat/insp-leases calls `validate_report` and `apply_inspection` from here so
its report endpoint works and is tested before insp-apply is merged. It checks
only the report's shape and changes nothing on the release. When merging
feat/insp-apply, take ITS file whole (this one is to be dropped): the names
and signatures below are the contract's (/work/wt/INSPECT_CONTRACT.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import Invalid, NotFound

from .models import Release

ROLES = ("par2", "nfo", "archive")


@dataclass(frozen=True)
class Report:
    results: list[dict[str, Any]]
    missing: list[dict[str, Any]]


@dataclass(frozen=True)
class Applied:
    release_id: int
    name: str
    category: int
    renamed: bool
    passworded: bool
    encrypted: bool
    why: str


def validate_report(payload: dict[str, Any]) -> Report:
    results, missing = payload.get("results"), payload.get("missing", [])
    if not isinstance(results, list) or not isinstance(missing, list):
        raise Invalid("results and missing must be lists.")
    for item in results:
        if not isinstance(item, dict) or item.get("role") not in ROLES:
            raise Invalid("Each result needs a role: par2, nfo or archive.")
    return Report(results, missing)


def apply_inspection(release_id: int, report: Report) -> Applied:
    release = Release.objects.filter(pk=release_id).first()
    if release is None:
        raise NotFound(f"Release {release_id} does not exist.")
    return Applied(
        release_id, release.name, release.category, False, False, False,
        "Kept the posted name: the stand-in applies nothing.",
    )  # fmt: skip
