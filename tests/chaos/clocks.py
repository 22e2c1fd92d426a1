"""Processes whose wall clock is hours off (libfaketime), and calls to the API by hand.

`skewed(hours)` is the environment that starts a process with its clock that
far ahead (or behind, when negative): `time.time()`, `datetime.now()` and log
stamps move, the monotonic clock does not (as on a host whose clock is wrong),
and files keep the kernel's times. .ci/install-faketime installs the library.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from glob import glob
from pathlib import Path
from typing import Any

from tests.support.fleet import ROOT

LIBRARIES = glob("/usr/lib/*/faketime/libfaketimeMT.so.1")
SHIM = Path(__file__).with_name("faketime_shim")  # time.sleep that works under the library


def skewed(hours: float) -> dict[str, str]:
    if not LIBRARIES:
        raise AssertionError("libfaketime is missing: run .ci/install-faketime as root")
    return {
        "LD_PRELOAD": LIBRARIES[0],
        "FAKETIME": f"{hours:+}h",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        "PYTHONPATH": f"{SHIM}:{ROOT}",
    }


def call(base_url: str, token: str, path: str, body: Any = None) -> tuple[int, Any]:
    """POST JSON to /api/v1 + path; (status, decoded answer or None)."""
    request = urllib.request.Request(
        f"{base_url}/api/v1{path}",
        data=json.dumps(body or {}).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read() or b"null")
