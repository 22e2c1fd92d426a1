"""A coordinator from before the columnar form (issue 27) in a mixed fleet.

It answers a columnar batch 400 "files: must be a list of files."; the agent
sends that batch again as File objects and every later one so at once, and the
range is finished with nothing lost (before, each batch was refused and the
range failed after its attempts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from seed_node.http import CoordinatorError
from seed_node.reporting import refuses_columns
from tests.seed_node.test_agent import one_lease, run_agent
from tests.support.nntpd import NNTPServer
from tests.support.scripted import Answer, ScriptedCoordinator, binary_articles

OLD_REFUSAL = "files: must be a list of files."


@pytest.mark.slow
def test_an_older_coordinator_gets_its_batches_as_file_objects(
    coordinator: ScriptedCoordinator, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("sn_test-token\n")

    def old_batch(body: Any) -> Answer:
        for key in ("files", "fragments"):
            if not isinstance(body[key], list):
                return 400, {"error": "invalid", "detail": OLD_REFUSAL.replace("files", key, 1)}
        return 200, {"next": body["next"], "stored": len(body["files"])}

    with NNTPServer() as news:
        news.add_group("alt.binaries.x", binary_articles())
        coordinator.routes["/ranges/lease"] = one_lease(1, 400)
        coordinator.routes["/ranges/7/batch"] = old_batch
        coordinator.routes["*"] = lambda _: (204, None)
        status = run_agent(
            coordinator, token_file,
            "--news-server", f"nntp://{news.host}:{news.port}", "--batch-headers", "50",
        )  # fmt: skip
    assert status == 0
    sent = [body for _method, path, body in coordinator.calls if path == "/ranges/7/batch"]
    columnar = [body for body in sent if isinstance(body["files"], dict)]
    stored = [body for body in sent if isinstance(body["files"], list)]
    assert len(columnar) == 1  # refused once, then remembered
    assert len(stored) > 3
    assert sum(body["headers"] for body in stored) == len(binary_articles())
    assert coordinator.posted("/ranges/7/finish") == [{"epoch": 3}]
    assert not coordinator.posted("/ranges/7/release")


@pytest.mark.parametrize(
    ("status", "detail", "refused"),
    [
        (400, "files: must be a list of files.", True),
        (400, "fragments: must be a list of files.", True),
        (400, " files : must be a list ", True),
        (400, "files: must be a list of files, or an object of columns.", False),
        (400, "files.subject: must be a list.", False),
        (400, "files.message_id[3]: 'x' is not a message-id like <part@host>.", False),
        (400, "files: holds 20001 files; at most 20000 per batch.", False),
        (400, "next: must be a whole number.", False),
        (409, "files: must be a list of files.", False),
        (400, "", False),
    ],
)
def test_only_a_refusal_of_the_columnar_form_itself_is_taken_for_an_older_coordinator(
    status: int, detail: str, refused: bool
) -> None:
    assert refuses_columns(CoordinatorError(status, "invalid", detail)) is refused
