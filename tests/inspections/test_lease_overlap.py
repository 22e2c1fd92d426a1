"""Two lease calls of one node that overlap still hold the node to its cap
(INSPECT_LEASES_PER_NODE): the second counts the node's live leases only once the
first has committed its claim."""

from __future__ import annotations

import pytest

from inspections import services
from inspections.models import Inspection
from tests.support.factories import NodeFactory
from tests.support.overlap import overlapping_calls

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_overlapping_calls_of_one_node_hold_it_to_its_cap(planned, settings):
    settings.INSPECT_LEASES_PER_NODE = 4
    settings.LEASE_RATE_PER_MINUTE = 0
    for n in range(10):
        planned(f"{n}8f7d6e5c4b3", date=1_700_000_000 + n * 1000)
    node = NodeFactory()
    answered = overlapping_calls(node.id, lambda: len(services.lease_inspection(node.id, 4).leases))
    live = Inspection.objects.filter(status="leased", node_id=node.id).count()
    assert live == 4, f"the cap is 4, the node holds {live}: {answered}"
    assert answered == [4, "TooManyLeases"]
