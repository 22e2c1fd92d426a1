"""`LOG_FORMAT=json`: one JSON object per log line, for log shippers.

Twenty lines instead of python-json-logger: the lines need only the record's
time, level, logger and message plus the fields the request log passes
(`extra={"fields": ...}`, core/request_log.py), and the stdlib's json does
that without another dependency to keep up to date on every host.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update((key, value) for key, value in fields.items() if key not in line)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)
