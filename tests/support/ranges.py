"""A range read to its end over the API, and what the status counts as finished."""

from __future__ import annotations


def read_to_its_end(client, range_id, epoch, end, headers):
    body = {"epoch": epoch, "next": end + 1, "headers": headers}
    assert client.post(f"/api/v1/ranges/{range_id}/batch", body).status_code == 200


def counted_on(client, name):
    total, nodes = finished(client)
    return total, (
        nodes[name]["ranges_finished_last_hour"],
        nodes[name]["finished_headers_last_hour"],
    )


def finished(client):
    status = client.get("/api/v1/status").json()
    nodes = {n["name"]: n for n in status["nodes"]}
    return status["finished_last_hour"], nodes
