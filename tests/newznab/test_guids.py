"""Release guids: a UUID of this installation and the release, stable, read back by
t=get and t=details; every other id is error 300 with a sentence, never a 500."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from catalog.models import Release
from catalog.services import store_files
from newznab import selectors
from newznab.errors import NoSuchItem
from newznab.guids import MAX_GUID_RELEASE_ID, release_guid, release_id_of
from tests.support.factories import GroupFactory
from tests.support.newznab import call, error_code, parse
from tests.support.reports import release_files

INSTALLATION = uuid.UUID("6f1c0a52-9d3e-4b7a-8c21-0e5f4d3b2a19")
OTHER = uuid.UUID("0b9d8e7f-6a5c-4d3e-9f21-a0b1c2d3e4f5")


def test_a_guid_is_a_version_8_uuid_read_back_to_its_release() -> None:
    for release_id in (1, 17, 2**31, MAX_GUID_RELEASE_ID):
        guid = uuid.UUID(release_guid(INSTALLATION, release_id))
        assert guid.version == 8 and guid.variant == uuid.RFC_4122
        assert release_id_of(str(guid), INSTALLATION) == release_id
        assert release_id_of(str(guid).upper(), INSTALLATION) == release_id


def test_two_installations_give_one_release_two_guids() -> None:
    assert release_guid(INSTALLATION, 17) != release_guid(OTHER, 17)
    assert release_guid(INSTALLATION, 17) == release_guid(INSTALLATION, 17)
    with pytest.raises(NoSuchItem, match="not a guid this indexer gave"):
        release_id_of(release_guid(OTHER, 17), INSTALLATION)


def test_a_guid_in_other_digits_is_not_read() -> None:
    guid = release_guid(INSTALLATION, 17)
    arabic = guid.translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
    with pytest.raises(NoSuchItem, match="an id is the guid of an item"):
        release_id_of(arabic, INSTALLATION)


def test_the_old_release_numbers_are_still_read() -> None:
    assert release_id_of("17", INSTALLATION) == 17


@pytest.mark.parametrize(
    "value",
    ["abc", "6f1c0a52-9d3e-4b7a-8c21", "6f1c0a52-9d3e-4b7a-8c21-0e5f4d3b2a1z", "x" * 5000,
     "٣", str(uuid.uuid4()), "-1", "99999999999999999999"],
)  # fmt: skip
def test_anything_else_is_no_such_item_with_a_sentence(value: str) -> None:
    with pytest.raises(NoSuchItem) as refused:
        release_id_of(value, INSTALLATION)
    assert "No such item" in str(refused.value) and len(str(refused.value)) < 300


@pytest.mark.django_db
def test_the_installation_identity_is_stored_once_and_random() -> None:
    selectors._installation = None  # read it from the database, not the process's copy
    identity = selectors.installation()
    assert identity.version == 4  # gen_random_uuid()
    assert selectors.installation() is identity


@pytest.mark.django_db
def test_get_and_details_take_the_guid_of_a_listed_item(client: Any, api_key: Any) -> None:
    store_files(
        GroupFactory().id, None, [], release_files("Guid.Show.S01E01.720p-G", date=int(time.time()))
    )
    release = Release.objects.get()
    channel = parse(call(client, t="search", q="guid", apikey=api_key.key)).find("channel")
    [item] = channel.findall("item")
    guid_element = item.find("guid")
    assert guid_element.get("isPermaLink") == "false"
    guid = guid_element.text
    assert release_id_of(guid, selectors.installation()) == release.id
    assert f"id={guid}" in item.findtext("link")
    details = parse(call(client, t="details", id=guid, apikey=api_key.key))
    assert details.find("channel/item/guid").text == guid
    got = call(client, t="get", id=guid, apikey=api_key.key)
    assert got.status_code == 200 and b"Guid.Show" in b"".join(got.streaming_content)


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["not-a-guid", str(uuid.uuid4()), "{" + "0" * 32])
def test_a_malformed_or_foreign_guid_is_error_300(client: Any, api_key: Any, value: str) -> None:
    for function in ("get", "details"):
        response = call(client, t=function, id=value, apikey=api_key.key)
        assert response.status_code == 200
        assert error_code(response) == 300
