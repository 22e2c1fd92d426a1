"""An S3-compatible server (moto) for the object-storage tests, and its credentials."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.net import LOOPBACK, free_port

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-H", LOOPBACK, "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://{LOOPBACK}:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, "moto_server exited"
            try:
                urllib.request.urlopen(endpoint + "/moto-api/", timeout=2).close()
                break
            except (urllib.error.URLError, OSError):
                assert time.monotonic() < deadline, "moto_server did not come up"
                time.sleep(0.1)
        yield endpoint
    finally:
        server.terminate()
        server.wait(10)
