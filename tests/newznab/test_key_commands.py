"""The API-key commands: issue_api_key, rotate_api_key, disable_api_key, enable_api_key.

Each prints a key alone on stdout, writes what the admin writes (the same
audit entry, but by "manage.py"), never logs the key, and fails with its own
exit status for each reason a script may need to tell apart.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client

from indexer.models import AuditEntry
from indexer.services import COMMAND_LINE_ACTOR
from newznab.keys import KEY_LENGTH, hash_api_key
from newznab.management import key_commands
from newznab.models import ApiKey
from tests.support.newznab import call, error_code

pytestmark = pytest.mark.django_db


def run(command: str, *args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(command, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def printed_key(command: str, *args: str) -> str:
    """The key a command printed: its stdout, which holds that and nothing else."""
    out, err = run(command, *args)
    assert out.endswith("\n") and out.count("\n") == 1, out
    key = out.strip()
    assert len(key) == KEY_LENGTH and not key.strip("0123456789abcdef")
    assert "shown once" in err and key not in err
    return key


def failure(command: str, *args: str) -> CommandError:
    with pytest.raises(CommandError) as raised:
        run(command, *args)
    return raised.value


def refusal(client: Client, key: str) -> int | None:
    """The newznab error a keyed search gets with this key; None when it is served."""
    response = call(client, t="search", q="x", apikey=key)
    return error_code(response) if b"<error" in response.content else None


def audit_text() -> str:
    return json.dumps(list(AuditEntry.objects.values("actor", "action", "object_type", "detail")))


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every record any logger writes during the test, at every level, with every SQL
    statement and its parameters (django.db.backends, as under DEBUG)."""
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="django.db.backends")  # "django" stops at INFO
    connection.force_debug_cursor = True
    yield caplog
    connection.force_debug_cursor = False


def test_issue_prints_a_key_that_works_and_stores_only_its_digest(client: Client) -> None:
    key = printed_key("issue_api_key", "sonarr-home")
    api_key = ApiKey.objects.get(name="sonarr-home")
    assert api_key.key_hash == hash_api_key(key)
    assert api_key.rate_limit is None and not api_key.disabled
    caps = call(client, t="caps", apikey=key)
    assert caps.status_code == 200 and b"<caps>" in caps.content
    # caps takes no key (the spec), so the key's test is a search, which needs one.
    assert refusal(client, key) is None
    assert refusal(client, "0" * KEY_LENGTH) == 100


def test_issue_takes_a_rate_limit_the_key_is_held_to(client: Client) -> None:
    key = printed_key("issue_api_key", "hydra", "--rate-limit", "2")
    assert ApiKey.objects.get(name="hydra").rate_limit == 2
    assert [refusal(client, key) for _ in range(3)] == [None, None, 500]


def test_issue_is_audited_as_the_admin_page_audits_it(admin_client: Client) -> None:
    admin_client.post("/admin/newznab/apikey/issue/", {"name": "from-the-page"})
    printed_key("issue_api_key", "from-the-command")
    page, command = (
        AuditEntry.objects.get(detail__api_key=name)
        for name in ("from-the-page", "from-the-command")
    )
    assert (command.action, command.object_type, command.count) == (
        page.action, page.object_type, page.count,
    )  # fmt: skip
    assert command.detail == {
        "api_key": "from-the-command", "id": ApiKey.objects.get(name="from-the-command").pk,
    }  # fmt: skip
    assert set(command.detail) == set(page.detail)
    assert (page.actor, command.actor, command.user) == ("admin", COMMAND_LINE_ACTOR, None)


def test_a_taken_name_exits_4_and_issues_nothing() -> None:
    first = printed_key("issue_api_key", "radarr")
    error = failure("issue_api_key", " radarr ")
    assert error.returncode == key_commands.NAME_TAKEN == 4
    assert "exists" in str(error) and "rotate" in str(error)
    assert ApiKey.objects.get(name="radarr").key_hash == hash_api_key(first)
    assert AuditEntry.objects.count() == 1


@pytest.mark.parametrize(
    "limit",
    ["-1", "abc", "", "+5", "1.5", "2147483648", "99999999999999999999999", "\u0661\u0662", "1_0"],
)
def test_a_bad_rate_limit_exits_5_and_issues_nothing(limit: str) -> None:
    error = failure("issue_api_key", "sonarr", "--rate-limit", limit)
    assert error.returncode == key_commands.BAD_RATE_LIMIT == 5
    assert "--rate-limit" in str(error) and "from 0 to 2147483647" in str(error)
    assert not ApiKey.objects.exists() and not AuditEntry.objects.exists()


def test_the_largest_rate_limit_the_column_holds_is_taken() -> None:
    printed_key("issue_api_key", "sonarr", "--rate-limit", "2147483647")
    assert ApiKey.objects.get(name="sonarr").rate_limit == 2**31 - 1


def test_a_name_of_more_than_100_characters_exits_1() -> None:
    error = failure("issue_api_key", "x" * 101)
    assert error.returncode == 1 and "1 to 100 characters" in str(error)
    assert not ApiKey.objects.exists()


def test_rotate_prints_a_new_key_and_the_old_one_stops_at_once(client: Client) -> None:
    old = printed_key("issue_api_key", "sonarr")
    new = printed_key("rotate_api_key", "sonarr")
    assert new != old
    assert refusal(client, old) == 100
    assert refusal(client, new) is None
    api_key = ApiKey.objects.get(name="sonarr")
    assert api_key.key_hash == hash_api_key(new) and api_key.rotated_at is not None
    rotated = AuditEntry.objects.get(action="token rotated")
    assert (rotated.actor, rotated.object_type, rotated.count, rotated.detail) == (
        COMMAND_LINE_ACTOR, "api key", 1, {"ids": [api_key.pk]},
    )  # fmt: skip


def test_rotating_a_disabled_key_exits_6_and_changes_nothing(client: Client) -> None:
    key = printed_key("issue_api_key", "sonarr")
    run("disable_api_key", "sonarr")
    error = failure("rotate_api_key", "sonarr")
    assert error.returncode == key_commands.KEY_DISABLED == 6
    assert "disabled" in str(error) and "enable_api_key sonarr" in str(error)
    assert ApiKey.objects.get(name="sonarr").key_hash == hash_api_key(key)
    assert not AuditEntry.objects.filter(action="token rotated").exists()


@pytest.mark.parametrize("command", ["rotate_api_key", "disable_api_key", "enable_api_key"])
def test_an_unknown_name_exits_3(command: str) -> None:
    printed_key("issue_api_key", "sonarr")
    error = failure(command, "sonar")
    assert error.returncode == key_commands.UNKNOWN_NAME == 3
    assert "No API user is named 'sonar'" in str(error)
    assert AuditEntry.objects.count() == 1


def test_disable_refuses_the_key_until_enable(client: Client) -> None:
    key = printed_key("issue_api_key", "sonarr")
    out, _ = run("disable_api_key", "sonarr")
    assert out == "The API user 'sonarr' is disabled.\n"
    assert refusal(client, key) == 101
    out, _ = run("disable_api_key", "sonarr")
    assert out == "The API user 'sonarr' was disabled already.\n"
    disabled = AuditEntry.objects.filter(action="api keys disabled").order_by("id")
    assert [(entry.actor, entry.count) for entry in disabled] == [
        (COMMAND_LINE_ACTOR, 1), (COMMAND_LINE_ACTOR, 0),
    ]  # fmt: skip
    run("enable_api_key", "sonarr")
    assert refusal(client, key) is None
    assert AuditEntry.objects.get(action="api keys enabled").count == 1


def test_no_key_reaches_a_log_or_the_audit(
    client: Client, logged: pytest.LogCaptureFixture
) -> None:
    issued = printed_key("issue_api_key", "sonarr", "--rate-limit", "50")
    rotated = printed_key("rotate_api_key", "sonarr")
    run("disable_api_key", "sonarr")
    run("enable_api_key", "sonarr")
    assert refusal(client, rotated) is None
    assert AuditEntry.objects.count() == 4
    # The writes were logged, with their parameters: the digests, never the keys.
    assert hash_api_key(issued) in logged.text and hash_api_key(rotated) in logged.text
    for key in (issued, rotated):
        assert key not in logged.text
        assert key not in audit_text()
