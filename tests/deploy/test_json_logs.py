"""LOG_FORMAT=json: every line is one JSON object; the request log's fields are its keys."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.log_format import JsonFormatter

ROOT = Path(__file__).resolve().parents[2]

REQUEST = """
from django.test import Client
Client().get('/api/v1/no-such-call?token=secret')
import logging; logging.getLogger('indexer').warning('plain message %s', 'too')
"""


@pytest.mark.slow
def test_with_log_format_json_a_request_logs_one_json_line_with_its_fields(tmp_path) -> None:
    env = {**os.environ, "LOG_FORMAT": "json", "DATA_DIR": str(tmp_path), "SECRET_KEY": "x" * 50}
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", REQUEST],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # Every log line parses (the shell's banner and Python's warnings are not log lines).
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert len(lines) >= 3, done.stderr
    (request,) = [line for line in lines if line["logger"] == "indexer.requests"]
    assert request["method"] == "GET"
    assert request["path"] == "/api/v1/no-such-call"
    assert request["status"] == 404
    assert isinstance(request["duration_ms"], float)
    assert request["level"] == "INFO" and request["time"].endswith("+00:00")
    assert "secret" not in json.dumps(lines)
    assert {"logger": "indexer", "level": "WARNING", "message": "plain message too"}.items() <= (
        lines[-1].items()
    )


def test_an_exception_is_kept_in_the_line() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "failed"
    assert "ValueError: boom" in line["exception"]
