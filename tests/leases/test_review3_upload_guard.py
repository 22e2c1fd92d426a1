"""Review 3: the one-upload-per-lane guard outlives the lease of the upload holding it.

The guard is taken after the holder check and held for as long as the body
streams (WEB_BODY_MIN_BYTES_PER_SECOND gives an 8 GiB body six days). A holder
that lost the lane (lease expired, taken over) keeps the guard while its doomed
upload streams, and the lane's new holder is refused with 429 for all that
time; the agent retries a 429 forever inside upload_snapshot, so its window
worker stops there (window indexing stalls). Fails on dead99b.
"""

from __future__ import annotations

import threading

import pytest

from indexer.errors import LeaseLost, UploadInProgress
from tests.leases.conftest import lease_lane
from tests.leases.test_snapshots import held_lane, put, snap, store
from tests.support.threads import run_threads

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_fenced_holders_upload_does_not_lock_out_the_new_holder(
    node_client, snapshot_dir, backdate_lane, settings
):
    old_node, old = held_lane(node_client)
    body = snap(old, 1, size=200_000)
    streaming, tried = threading.Event(), threading.Event()

    def trickle():  # the old holder's upload, still arriving
        yield body[:1000]
        streaming.set()
        assert tried.wait(30)
        yield body[1000:]

    def old_upload():
        try:
            return store(old_node, old, trickle(), 100)
        except (LeaseLost, UploadInProgress) as exc:
            return exc

    def new_holder():
        assert streaming.wait(30)
        try:
            backdate_lane(old["group"]["id"], "history", settings.LEASE_TTL_SECONDS + 1)
            new_node = node_client()
            new = lease_lane(new_node)["lease"]
            assert new["epoch"] != old["epoch"]
            return put(new_node, new, snap(new, 2), next_id=200).status_code
        finally:
            tried.set()

    _old_result, status = run_threads([old_upload, new_holder])
    assert status == 204, f"the lane's holder was refused ({status}) while a fenced upload streamed"


def test_a_guard_session_gone_before_the_header_is_read_is_a_503_not_a_500(
    node_client, snapshot_dir
):
    # With a header naming a rule set that is not the current one, the check reads
    # it on the guards' own session (a raw psycopg connection). That session is
    # shared by every upload of the process and closed by any thread's _drop()
    # (a failed take or unlock), or by the database (a restart): psycopg's own
    # OperationalError is not Django's, so the API answers 500, not 503.
    from indexer.catalog.services import publish_rules
    from indexer.rulesets import forget_current_rules
    from leases import upload_guard
    from tests.support.snapshots import window_snapshot
    from usenet.rules import RuleSet

    node, lease = held_lane(node_client)
    older = publish_rules(RuleSet.default().to_dict(), note="older").version
    publish_rules(RuleSet.default().to_dict(), note="current")
    forget_current_rules()  # this process's cache may hold another version
    body = window_snapshot(lease["group"]["name"], rules_version=older)

    def chunks():
        upload_guard.GUARDS.session.close()  # as another thread's _drop() does
        yield body

    try:
        store(node, lease, chunks(), 100)
    except Exception as exc:
        from indexer.api.errors import response_for_unhandled

        status = response_for_unhandled(exc).status_code
    else:
        status = 204
    assert status in (204, 503), f"{status}"
