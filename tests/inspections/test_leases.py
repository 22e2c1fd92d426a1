"""The inspection-lease protocol over Django's request handling against PostgreSQL:
the contract's shapes, fencing, takeover, attempts, the cap, the pause, SKIP LOCKED."""

from __future__ import annotations

import json
from collections import Counter
from functools import partial

import psycopg
import pytest
from django.db import DataError, connection, transaction
from django.test import override_settings

from catalog.models import Release
from indexer.services import set_nodes_disabled
from indexer.space import forget_cached_sizes
from inspections import planning, services
from inspections.models import Inspection, InspectionStatus
from seeding import maintenance
from tests.support.factories import NodeFactory
from tests.support.releases import store_fragments
from tests.support.reports import report as file_report
from tests.support.threads import run_threads

pytestmark = pytest.mark.django_db


def lease(node):
    response = node.post("/api/v1/inspections/lease")
    assert response.status_code == 200, response.content
    return response.json()


def held(node):
    body = lease(node)
    assert body["lease"] is not None, body
    return body["lease"]


def report(node, leased, **overrides):
    body = {"epoch": leased["epoch"], "results": [{"role": "par2", "format": "par2"}]}
    body.update(overrides)
    return node.post(f"/api/v1/inspections/{leased['id']}/report", body)


def test_a_lease_names_the_release_its_group_and_articles(planned, node_client):
    row = planned()
    node = node_client()
    body = lease(node)
    assert body["retry_after"] is None and body["paused"] is None
    assert body["lease"] == {
        "id": row.id,
        "epoch": 1,
        "release": row.release_id,
        "group": "alt.binaries.inspect",
        "articles": row.articles,
    }
    row.refresh_from_db()
    assert (row.status, row.node_id, row.attempts) == ("leased", node.node.id, 1)


def test_nothing_to_lease_says_when_to_retry(node_client):
    body = lease(node_client())
    assert body["lease"] is None and body["retry_after"] > 0 and body["paused"] is None


def test_newest_releases_go_first_and_rows_without_articles_wait(planned, node_client, group):
    old = planned("a8f7d6e5c4b3", date=1_700_000_000)
    new = planned("q8w7e6x5z4y3", date=1_700_500_000)
    waiting = planned("k3j9xq2m8zt4", date=1_700_900_000)
    Inspection.objects.filter(pk=waiting.pk).update(articles=[])
    node = node_client()
    assert [held(node)["id"] for _ in range(2)] == [new.id, old.id]
    assert lease(node)["lease"] is None


def test_heartbeat_and_release_are_fenced_by_epoch_and_node(planned, node_client):
    planned()
    owner, other = node_client(), node_client()
    leased = held(owner)
    url = f"/api/v1/inspections/{leased['id']}"
    assert owner.post(f"{url}/heartbeat", {"epoch": 1}).status_code == 204
    stale = owner.post(f"{url}/heartbeat", {"epoch": 7})
    assert stale.status_code == 409 and "Epoch 7 of inspection" in stale.json()["detail"]
    foreign = other.post(f"{url}/heartbeat", {"epoch": 1})
    assert foreign.status_code == 409
    assert foreign.json()["detail"].endswith("leased to another node now: drop it and lease again.")
    assert other.post(f"{url}/release", {"epoch": 1}).status_code == 409
    assert report(other, leased).status_code == 409  # a valid report, fenced all the same
    empty = other.post(f"{url}/report", {"epoch": 1, "results": []})  # invalid too: the fence first
    assert empty.status_code == 409 and empty.json()["error"] == "lease_lost"
    gone = owner.post("/api/v1/inspections/99999999/heartbeat", {"epoch": 1})
    assert gone.status_code == 404
    assert gone.json()["detail"] == "Inspection 99999999 does not exist."
    assert Inspection.objects.get().node_id == owner.node.id


def test_a_quiet_lease_passes_to_another_node_which_fences_the_first(
    planned, node_client, backdate_inspection
):
    planned()
    first, second = node_client(), node_client()
    leased = held(first)
    backdate_inspection(leased["id"], 3600)
    maintenance.mark_all_run()  # the claim's own sweep takes it back, not the upkeep
    taken = held(second)
    assert (taken["id"], taken["epoch"]) == (leased["id"], 2)
    late = report(first, leased)
    assert late.status_code == 409 and "leased to another node" in late.json()["detail"]
    assert report(second, taken).status_code == 200


def test_a_lease_call_whose_sweep_frees_a_lease_is_counted_once(
    planned, node_client, backdate_inspection
):
    planned()
    first, second = node_client(), node_client()
    leased = held(first)
    backdate_inspection(leased["id"], 3600)
    maintenance.mark_all_run()  # the upkeep is not due: the empty claim sweeps
    sweep = maintenance.task_named(services.INSPECTIONS.sweep_task)
    before = sweep.last_run
    assert held(second)["id"] == leased["id"]  # claimed after the sweep freed it
    assert sweep.last_run > before  # the sweep ran as the upkeep's task: not due again soon
    with connection.cursor() as cursor:  # this read is one more hit
        cursor.execute("SELECT hits FROM rate_hit(%s, 60)", [f"lease:{second.node.id}"])
        assert cursor.fetchone()[0] == 2  # the call counted once, not once per claim


@override_settings(MAX_ATTEMPTS=2)
def test_attempts_run_out_and_the_row_fails_with_the_error(planned, node_client):
    row = planned()
    node = node_client()
    for attempt in (1, 2):
        leased = held(node)
        assert leased["epoch"] == attempt
        url = f"/api/v1/inspections/{leased['id']}/release"
        assert node.post(url, {"epoch": attempt, "error": "430 no such article"}).status_code == 204
    row.refresh_from_db()
    assert (row.status, row.error, row.attempts) == ("failed", "430 no such article", 2)
    assert lease(node)["lease"] is None


@override_settings(MAX_ATTEMPTS=1)
def test_an_uncounted_release_gives_the_attempt_back(planned, node_client):
    row = planned()
    node = node_client()
    leased = held(node)
    url = f"/api/v1/inspections/{leased['id']}/release"
    assert node.post(url, {"epoch": 1, "uncounted": True}).status_code == 204
    row.refresh_from_db()
    assert (row.status, row.attempts) == ("queued", 0)


@override_settings(MAX_ATTEMPTS=1)
def test_a_quiet_lease_out_of_attempts_fails_with_a_sentence(
    planned, node_client, backdate_inspection
):
    row = planned()
    held(node_client())
    backdate_inspection(row.id, 3600)
    assert services.INSPECTIONS.retire_quiet() == 1
    row.refresh_from_db()
    assert (row.status, row.error) == ("failed", "the lease went quiet 1 times")


@override_settings(INSPECT_LEASES_PER_NODE=1)
def test_a_node_holds_at_most_its_cap_of_inspection_leases(planned, node_client):
    planned("a8f7d6e5c4b3")
    planned("q8w7e6x5z4y3", date=1_700_500_000)
    node = node_client()
    held(node)
    refused = node.post("/api/v1/inspections/lease")
    assert refused.status_code == 429
    assert refused.json()["error"] == "too_many_leases"
    assert "INSPECT_LEASES_PER_NODE=1" in refused.json()["detail"]
    assert held(node_client())["epoch"] == 1  # another node gets the other one


@override_settings(DB_MAX_BYTES=1024)
def test_leasing_pauses_while_the_database_is_over_its_size_limit(planned, node_client):
    forget_cached_sizes()
    planned()
    body = lease(node_client())
    forget_cached_sizes()
    assert body["lease"] is None and "DB_MAX_BYTES" in body["paused"]
    assert Inspection.objects.get().status == InspectionStatus.QUEUED


def test_a_disabled_node_loses_its_inspection_leases(planned, node_client):
    row = planned()
    node = node_client()
    held(node)
    set_nodes_disabled([node.node.id], True)
    row.refresh_from_db()
    assert (row.status, row.node_id) == ("queued", None)


def test_a_report_ends_the_lease_done_and_answers_the_release(planned, node_client):
    row = planned()
    node = node_client()
    leased = held(node)
    response = report(node, leased)
    assert response.status_code == 200, response.content
    release = response.json()["release"]
    assert (release["id"], release["name"]) == (row.release_id, "a8f7d6e5c4b3")
    assert set(release) == {"id", "name", "category", "renamed", "passworded", "why"}
    row.refresh_from_db()
    assert (row.status, row.error) == ("done", "")
    assert row.outcome["release_id"] == row.release_id
    assert report(node, leased).status_code == 409  # done: a replay changes nothing


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({}, "epoch"),
        ({"epoch": 1}, "results"),
        ({"epoch": "one", "results": []}, "whole number"),
        ({"epoch": 1, "results": "par2"}, "results"),
        ({"epoch": 1, "results": [{"role": "sfv"}]}, "role"),
        ({"epoch": 1, "results": [{"role": "par2"}] * 4}, "results"),
        (
            {
                "epoch": 1,
                "results": [],
                "missing": [{"role": "nfo", "message_id": "<else@x>", "error": "430"}],
            },
            "not an article",
        ),
    ],
)
def test_bad_reports_get_400_with_a_sentence(planned, node_client, body, words):
    planned()
    node = node_client()
    leased = held(node)
    response = node.post(f"/api/v1/inspections/{leased['id']}/report", body)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid"
    assert words in response.json()["detail"]
    assert Inspection.objects.get().status == InspectionStatus.LEASED


@pytest.mark.parametrize(
    ("result", "words"),
    [
        # A lone surrogate ("\ud800" in JSON) is no character: it was a 500 in a name
        # (it reached the database), and a 400 about "the database" in a note.
        ({"release_names": ["Some.Movie.\ud800.1080p-GRP"]}, "results[0].release_names[0] is"),
        ({"notes": ["read as \udfff"]}, "results[0].notes[0] is not valid Unicode text"),
        ({"notes": ["read as \u202ecp437"]}, "results[0].notes[0] holds the invisible"),
    ],
)
def test_text_the_database_cannot_store_is_a_400_naming_the_field(
    planned, node_client, result, words
):
    planned()
    node = node_client()
    leased = held(node)
    body = {"epoch": leased["epoch"], "results": [{"role": "nfo", "format": "nfo", **result}]}
    response = node.http.post(
        f"/api/v1/inspections/{leased['id']}/report",
        json.dumps(body),  # ensure_ascii: the surrogate travels as JSON's \ud800 escape
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert words in response.json()["detail"]
    assert Inspection.objects.get().status == InspectionStatus.LEASED


@pytest.mark.parametrize(
    "hostile",
    [
        "Some.Movie.2020.1080p/../../etc-GRP",
        "Some.Movie.2020.1080p.<script>-GRP",
        "Some.Movie.2020.1080p.\u202eBluRay-GRP",
    ],
)
def test_a_hostile_nfo_name_never_names_the_release(planned, node_client, hostile):
    row = planned()
    node = node_client()
    leased = held(node)
    response = report(node, leased, results=[{"role": "nfo", "release_names": [hostile]}])
    assert response.status_code == 200, response.content
    assert response.json()["release"]["name"] == "a8f7d6e5c4b3"
    release = Release.objects.get(pk=row.release_id)
    assert (release.name, release.posted_name) == ("a8f7d6e5c4b3", None)
    assert release.inspection["refused"][0]["name"] == hostile


def test_a_result_for_a_role_the_lease_did_not_name_is_refused(group, node_client):
    store_fragments(group, [file_report("b1c2d3e4f5a6.part01.rar", index=1, count=2)])
    planning.plan_all()
    node = node_client()
    leased = held(node)
    response = report(node, leased)  # a par2 result; the lease named only the archive
    assert response.status_code == 400
    assert "did not ask for" in response.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_a_row_another_connection_holds_is_skipped_not_waited_for(planned, node_client):
    newest = planned("q8w7e6x5z4y3", date=1_700_500_000)
    older = planned("a8f7d6e5c4b3")
    dsn = connection.get_connection_params()
    with psycopg.connect(**dsn) as other:  # a second connection holds the newest row's lock
        other.execute("SELECT 1 FROM inspection WHERE id = %s FOR UPDATE", [newest.id])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")  # a wait would fail, not hang
        assert held(node_client())["id"] == older.id
        other.rollback()
    assert held(node_client())["id"] == newest.id


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_8_connections_lease_200_inspections_and_each_is_leased_once(store, settings):
    settings.INSPECT_LEASES_PER_NODE = 0
    settings.LEASE_RATE_PER_MINUTE = 0
    for index in range(200):
        store(f"{index:04d}f7d6e5c4b3", date=1_700_000_000 + index * 10)
    planning.plan_all()
    assert Inspection.objects.count() == 200
    nodes = [NodeFactory() for _ in range(8)]

    def lease_all(node_id: int) -> list[int]:
        ids = []
        while (offer := services.lease_inspection(node_id)).lease is not None:
            ids.append(offer.lease.id)
        return ids

    claimed = run_threads([partial(lease_all, node.id) for node in nodes])
    everything = [i for ids in claimed for i in ids]
    assert [i for i, n in Counter(everything).items() if n > 1] == []
    assert len(everything) == 200
    assert sum(1 for ids in claimed if ids) > 1


def lease_several(node, count):
    response = node.post("/api/v1/inspections/lease", {"count": count})
    assert response.status_code == 200, response.content
    return response.json()


def test_a_lease_call_asking_for_several_hands_them_out_newest_first(planned, node_client):
    rows = [planned(f"{n}8f7d6e5c4b3", date=1_700_000_000 + n * 1000) for n in range(4)]
    node = node_client()
    body = lease_several(node, 3)
    handed = [leased["id"] for leased in body["leases"]]
    assert handed == [rows[3].id, rows[2].id, rows[1].id]
    assert body["lease"] == body["leases"][0] and body["retry_after"] is None
    for row in rows[1:]:
        row.refresh_from_db()
        assert (row.status, row.node_id, row.epoch, row.attempts) == ("leased", node.node.id, 1, 1)
    assert [leased["id"] for leased in lease_several(node, 3)["leases"]] == [rows[0].id]
    empty = lease_several(node, 3)
    assert empty["lease"] is None and empty["leases"] == [] and empty["retry_after"] > 0


def test_a_lease_call_without_a_count_hands_out_one(planned, node_client):
    planned("a8f7d6e5c4b3")
    planned("q8w7e6x5z4y3", date=1_700_500_000)
    body = lease(node_client())
    assert [leased["id"] for leased in body["leases"]] == [body["lease"]["id"]]
    assert Inspection.objects.filter(status="leased").count() == 1


@override_settings(INSPECT_LEASES_PER_NODE=3)
def test_a_count_is_cut_to_what_the_nodes_cap_leaves(planned, node_client):
    for n in range(5):
        planned(f"{n}8f7d6e5c4b3", date=1_700_000_000 + n * 1000)
    node = node_client()
    held(node)
    assert len(lease_several(node, 5)["leases"]) == 2  # 3 less the one held
    refused = node.post("/api/v1/inspections/lease", {"count": 5})
    assert refused.status_code == 429 and refused.json()["error"] == "too_many_leases"
    assert Inspection.objects.filter(status="leased").count() == 3


@override_settings(INSPECT_LEASES_PER_NODE=2)
def test_a_count_after_the_sweep_freed_leases_is_cut_to_the_cap_too(
    planned, node_client, backdate_inspection
):
    for n in range(3):
        planned(f"{n}8f7d6e5c4b3", date=1_700_000_000 + n * 1000)
    other, node = node_client(), node_client()
    quiet = [leased["id"] for leased in lease_several(other, 2)["leases"]]
    held(node)
    for inspection_id in quiet:
        backdate_inspection(inspection_id, 3600)
    maintenance.mark_all_run()  # the upkeep is not due: the empty claim sweeps
    # nothing queued: the gated claim finds none, the sweep frees the quiet two, and the
    # claim again hands out what the cap leaves this node (2 less the 1 it holds)
    assert len(lease_several(node, 2)["leases"]) == 1
    assert Inspection.objects.filter(status="leased", node_id=node.node.id).count() == 2


@pytest.mark.parametrize("body", [{"count": 0}, {"count": 17}, {"count": 2.5}, {"count": True}, []])
def test_a_bad_count_is_a_400_with_a_sentence(node_client, body):
    response = node_client().post("/api/v1/inspections/lease", body)
    assert response.status_code == 400, response.content
    assert response.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_several_leased_at_once_skip_a_row_another_connection_holds(planned, node_client):
    rows = [planned(f"{n}8f7d6e5c4b3", date=1_700_000_000 + n * 1000) for n in range(3)]
    dsn = connection.get_connection_params()
    with psycopg.connect(**dsn) as other:
        other.execute("SELECT 1 FROM inspection WHERE id = %s FOR UPDATE", [rows[1].id])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")
        handed = [leased["id"] for leased in lease_several(node_client(), 3)["leases"]]
        assert handed == [rows[2].id, rows[0].id]
        other.rollback()


def test_several_reports_in_one_call_are_each_applied_or_refused_as_alone(planned, node_client):
    rows = [planned(f"{n}8f7d6e5c4b3", date=1_700_000_000 + n * 1000) for n in range(4)]
    node = node_client()
    good, stale, bad, other = lease_several(node, 4)["leases"]
    par2 = [{"role": "par2", "format": "par2"}]
    body = {
        "reports": [
            {"id": good["id"], "epoch": good["epoch"], "results": par2},
            {"id": stale["id"], "epoch": stale["epoch"] - 1, "results": par2},
            {"id": bad["id"], "epoch": bad["epoch"], "results": [{"role": "sfv"}]},
            {"id": 999_999, "epoch": 1, "results": par2},
        ]
    }
    response = node.post("/api/v1/inspections/reports", body)
    assert response.status_code == 200, response.content
    answers = response.json()["reports"]
    assert [(a["id"], a["status"]) for a in answers] == [
        (good["id"], 200), (stale["id"], 409), (bad["id"], 400), (999_999, 404),
    ]  # fmt: skip
    by_release = {row.release_id: row for row in rows}
    assert answers[0]["release"]["id"] == good["release"] in by_release
    assert answers[1]["error"] == "lease_lost" and "stale" in answers[1]["detail"]
    assert answers[2]["error"] == "invalid" and "role" in answers[2]["detail"]
    assert answers[3]["error"] == "not_found"
    statuses = dict(Inspection.objects.values_list("id", "status"))
    assert statuses[good["id"]] == "done"
    assert statuses[stale["id"]] == statuses[bad["id"]] == statuses[other["id"]] == "leased"
    # one not in the call is reported alone as before; a report replayed is a 409
    assert report(node, other).status_code == 200
    again = node.post("/api/v1/inspections/reports", {"reports": body["reports"][:1]})
    assert [a["status"] for a in again.json()["reports"]] == [409]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({}, "reports"),
        ({"reports": []}, "reports"),
        ({"reports": [{"id": 1, "epoch": 1, "results": []}] * 5}, "reports"),
        ({"reports": [{"epoch": 1, "results": []}]}, "id"),
        ({"reports": [{"id": 2**63, "epoch": 1, "results": []}]}, "id"),
        (
            {
                "reports": [
                    {"id": 41, "epoch": 1, "results": []},
                    {"id": 41, "epoch": 2, "results": []},
                ]
            },
            "inspection 41 appears twice in one call",
        ),
    ],
)
def test_a_bad_reports_call_is_a_400_naming_the_field(node_client, body, words):
    response = node_client().post("/api/v1/inspections/reports", body)
    assert response.status_code == 400, response.content
    assert words in response.json()["detail"]


def test_the_default_cap_serves_a_node_of_two_inspecting_workers():
    """A `--mode inspect` worker holds a lease call's inspections being fetched, as many
    leased ahead and as many whose reports are on their way (docs/inspection.md): the
    default cap leaves two such workers their calls ahead answered in full."""
    from django.conf import settings

    from seed_node.inspecting import LEASE_COUNT

    assert settings.INSPECT_LEASES_PER_NODE >= 2 * 3 * LEASE_COUNT


def test_a_report_the_database_refuses_is_its_own_400_and_the_others_are_applied(
    planned, node_client, monkeypatch
):
    for n in range(3):
        planned(f"{n}8f7d6e5c4b3", date=1_700_000_000 + n * 1000)
    node = node_client()
    first, refused, last = lease_several(node, 3)["leases"]
    applied = services.report_inspection

    def report_inspection(node_id, inspection_id, epoch, payload):
        if inspection_id == refused["id"]:  # as a value past a column's type would
            with transaction.atomic():
                raise DataError("value out of range for type integer")
        return applied(node_id, inspection_id, epoch, payload)

    monkeypatch.setattr(services, "report_inspection", report_inspection)
    par2 = [{"role": "par2", "format": "par2"}]
    reports = [
        {"id": r["id"], "epoch": r["epoch"], "results": par2} for r in (first, refused, last)
    ]
    response = node.post("/api/v1/inspections/reports", {"reports": reports})
    assert response.status_code == 200, response.content
    answers = response.json()["reports"]
    assert [(a["id"], a["status"]) for a in answers] == [
        (first["id"], 200), (refused["id"], 400), (last["id"], 200),
    ]  # fmt: skip
    assert answers[1]["error"] == "invalid"
    assert "cannot store (value out of range for type integer)" in answers[1]["detail"]
    statuses = dict(Inspection.objects.values_list("id", "status"))
    assert (statuses[first["id"]], statuses[last["id"]]) == ("done", "done")


def test_a_report_sent_again_reads_as_done_to_the_agent(planned, node_client):
    # The agent counts a report already applied (its answer lost, sent again) as done,
    # not lost, from the 409 this coordinator answers: the two are held together here.
    from seed_node.inspecting import already_done

    planned()
    node = node_client()
    leased = held(node)
    assert report(node, leased).status_code == 200
    again = report(node, leased)
    assert again.status_code == 409
    assert already_done(again.json())
    other = planned("b1c2d3e4f5a6", date=1_700_000_500)
    assert other is not None
    lost = report(node, held(node), epoch=leased["epoch"] + 7)  # a stale epoch: lost
    assert lost.status_code == 409
    assert not already_done(lost.json())


def test_a_lease_call_refused_at_the_cap_still_counts_against_the_rate(
    planned, node_client, settings
):
    # The inspection lease call runs in a transaction (the node's lease lock): its
    # refusal is raised once the call's rate hit is committed, so a node at its cap
    # calling again and again is still counted and throttled.
    settings.INSPECT_LEASES_PER_NODE = 1
    settings.LEASE_RATE_PER_MINUTE = 0
    planned()
    planned("b1c2d3e4f5a6", date=1_700_000_500)
    node = node_client()
    held(node)
    for _ in range(3):
        assert node.post("/api/v1/inspections/lease", {}).status_code == 429
    with connection.cursor() as cursor:
        cursor.execute("SELECT hits FROM rate_bucket WHERE key = %s", [f"lease:{node.node.id}"])
        assert cursor.fetchone()[0] == 4


def test_another_nodes_inspection_is_refused_in_a_call_of_several(planned, node_client):
    # A node touches only its own leases: in a call of several reports, one of an
    # inspection another node holds is that report's 409, and the holder keeps it.
    planned()
    planned("b1c2d3e4f5a6", date=1_700_000_500)
    owner, other = node_client(), node_client()
    owned, own = held(owner), held(other)
    par2 = [{"role": "par2", "format": "par2"}]
    body = {
        "reports": [
            {"id": own["id"], "epoch": own["epoch"], "results": par2},
            {"id": owned["id"], "epoch": owned["epoch"], "results": par2},
        ]
    }
    response = other.post("/api/v1/inspections/reports", body)
    assert response.status_code == 200, response.content
    answers = response.json()["reports"]
    assert [(a["id"], a["status"]) for a in answers] == [(own["id"], 200), (owned["id"], 409)]
    assert answers[1]["error"] == "lease_lost"
    row = Inspection.objects.get(id=owned["id"])
    assert (row.status, row.node_id, row.epoch) == ("leased", owner.node.id, owned["epoch"])
