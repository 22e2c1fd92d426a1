"""Two range lease calls of one node that overlap still hold it to LEASE_MAX_PER_NODE:
the second counts the node's live leases only once the first has committed its claim."""

from __future__ import annotations

import pytest

from seeding import services
from seeding.models import SeedRange
from tests.support.factories import NodeFactory, SeedRangeFactory
from tests.support.overlap import overlapping_calls

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_overlapping_range_calls_of_one_node_hold_it_to_its_cap(settings):
    settings.LEASE_MAX_PER_NODE = 1
    settings.LEASE_RATE_PER_MINUTE = 0
    for n in range(3):
        SeedRangeFactory(start_id=1000 * (n + 1), end_id=1000 * (n + 1) + 999)
    node = NodeFactory()
    answered = overlapping_calls(
        node.id, lambda: int(services.lease_range(node.id).lease is not None)
    )
    assert SeedRange.objects.filter(status="leased", node_id=node.id).count() == 1
    assert answered == [1, "TooManyLeases"]
