"""factory-boy factories for every model the tests build: groups, nodes, ranges, lanes,
rule set versions and API keys (catalog files and releases come from stored reports:
tests/support/reports.py)."""

from __future__ import annotations

import factory

from catalog.models import RuleSetVersion
from core.tokens import hash_token, new_token
from indexer.models import Group, Node
from leases.models import GroupLane
from newznab.models import ApiKey
from seeding.models import SeedRange
from usenet.rules import RuleSet


class GroupFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Group
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"alt.binaries.test{n}")


class NodeFactory(factory.django.DjangoModelFactory):
    """A node; its plain token is on `node.token` right after creation.

    Create only: Node has no token field, so `.build()` would pass it to the model and fail.
    """

    class Meta:
        model = Node

    name = factory.Sequence(lambda n: f"node-{n}")
    token = factory.LazyFunction(new_token)
    token_hash = factory.LazyAttribute(lambda o: hash_token(o.token))

    @classmethod
    def _create(cls, model_class: type, *args: object, **kwargs: object) -> Node:
        token = kwargs.pop("token")
        node = super()._create(model_class, *args, **kwargs)
        node.token = token
        return node


class SeedRangeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SeedRange

    group = factory.SubFactory(GroupFactory)
    start_id = factory.Sequence(lambda n: 1_000_000 + n * 5000)
    end_id = factory.LazyAttribute(lambda o: o.start_id + 4999)
    next_id = factory.LazyAttribute(lambda o: o.start_id)
    priority = 100


class GroupLaneFactory(factory.django.DjangoModelFactory):
    """A lane of a group; held when given a `node` (and an epoch)."""

    class Meta:
        model = GroupLane

    group = factory.SubFactory(GroupFactory)
    lane = "history"


class RuleSetVersionFactory(factory.django.DjangoModelFactory):
    """A published rule set (the defaults unless `rules` is given)."""

    class Meta:
        model = RuleSetVersion

    version = factory.Sequence(lambda n: 100 + n)
    rules = factory.LazyFunction(lambda: RuleSet.default().to_dict())


class ApiKeyFactory(factory.django.DjangoModelFactory):
    """A newznab API key; its digest only (the key itself is never stored)."""

    class Meta:
        model = ApiKey

    name = factory.Sequence(lambda n: f"key-{n}")
    key_hash = factory.Sequence(lambda n: f"{n:064x}")
