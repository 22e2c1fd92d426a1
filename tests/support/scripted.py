"""A scripted coordinator for agent tests: answers set in advance, every call recorded."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from tests.support.nntpd import Article
from usenet.numbers import ascii_digits

Answer = tuple[int, Any]


class ScriptedCoordinator:
    """Answers POST/GET by path with ``routes[path](body) -> (status, json)``; records calls.

    ``keep_alive``: answer in HTTP/1.1 and keep each connection open for the next
    call, as the coordinator's gunicorn does (WEB_KEEPALIVE); else in HTTP/1.0,
    closing each connection after its answer."""

    def __init__(self, keep_alive: bool = False) -> None:
        self.routes: dict[str, Callable[[Any], Answer]] = {}
        self.calls: list[tuple[str, str, Any]] = []
        self.lock = threading.Lock()
        coordinator = self

        class Handler(BaseHTTPRequestHandler):
            # Headers and body go out in two writes: under Nagle the body would wait
            # for the agent's delayed ACK, 40 ms on every call.
            disable_nagle_algorithm = True
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                path, _, query = self.path.partition("?")
                path = path.removeprefix("/api/v1")
                if self.headers.get("Content-Type") == "application/json":
                    body = json.loads(raw) if raw else None
                else:  # a snapshot upload or a GET: record its query instead
                    body = {
                        key: int(value) if ascii_digits(value) else value
                        for key, value in parse_qsl(query)
                    } or None
                with coordinator.lock:
                    coordinator.calls.append((self.command, path, body))
                route = coordinator.routes.get(path) or coordinator.routes.get("*")
                status, payload = route(body) if route else (404, {"error": "not_found"})
                if isinstance(payload, bytes):  # a stream, e.g. gzip'd overview lines
                    data, content_type = payload, "application/octet-stream"
                else:
                    data = b"" if payload is None else json.dumps(payload).encode()
                    content_type = "application/json"
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_GET = do_PUT = answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def posted(self, suffix: str) -> list[Any]:
        """The bodies posted to paths ending in `suffix`; a batch's columnar files
        (docs/api.md) as File objects again."""
        return [as_rows(body) for method, path, body in self.calls if path.endswith(suffix)]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


NO_LEASE = (200, {"lease": None, "retry_after": None, "paused": None})


def binary_articles(count: int = 396) -> dict[int, Article]:
    """Files of 5 parts posted one after another, a text post after each; one part missing."""
    articles = {}
    number = 0
    for file_no in range(count // 6):
        for part in range(1, 6):
            number += 1
            if (file_no, part) != (3, 2):  # a hole: file 3 stays incomplete
                articles[number] = Article(subject=f'"file{file_no}.rar" yEnc ({part}/5)')
        number += 1
        articles[number] = Article(subject="just talk")
    return articles


def as_rows(body: Any) -> Any:
    """A batch body with columnar `files` and `fragments` turned into File objects."""
    if not isinstance(body, dict):
        return body
    rows = dict(body)
    for key in ("files", "fragments"):
        columns = body.get(key)
        if not isinstance(columns, dict):
            continue
        segments = list(
            zip(columns["part"], columns["article"], columns["message_id"], columns["bytes"])
        )
        files, first = [], 0
        for subject, poster, date, total, held in zip(
            columns["subject"], columns["poster"], columns["date"], columns["total"],
            columns["segments"],
        ):  # fmt: skip
            files.append({"subject": subject, "poster": poster, "date": date, "total": total,
                          "segments": [list(s) for s in segments[first:first + held]]})  # fmt: skip
            first += held
        rows[key] = files
    return rows
