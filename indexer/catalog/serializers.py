"""Input and output shapes of the catalog API (docs/api.md, "Catalog")."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from indexer.catalog.validation import MAX_DATE, MAX_MESSAGE_ID, MESSAGE_ID

MAX_PAGE = 1000


class FileListIn(serializers.Serializer):
    group = serializers.CharField(required=False, allow_blank=True, max_length=255)
    complete = serializers.ChoiceField(
        required=False, choices=["true", "false"], help_text="true or false."
    )
    q = serializers.CharField(
        required=False, allow_blank=True, max_length=200, help_text="Part of the file name."
    )
    since = serializers.IntegerField(
        required=False, min_value=0, max_value=MAX_DATE, help_text="Posted at or after (Unix)."
    )
    message_id = serializers.CharField(
        required=False,
        max_length=MAX_MESSAGE_ID,
        help_text="Files holding this message-id (<part@host>), in every group.",
    )
    page = serializers.IntegerField(required=False, min_value=1, max_value=MAX_PAGE, default=1)

    def validate_message_id(self, value: str) -> str:
        if not MESSAGE_ID.match(value):
            raise serializers.ValidationError("is not a message-id like <part@host>.")
        return value

    def to_internal_value(self, data: Any) -> Any:
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError(
                {name: ["is not a parameter of this list."] for name in unknown}
            )
        values = dict(super().to_internal_value(data))
        for name in ("group", "q"):
            if values.get(name) == "":
                del values[name]  # an empty search box means no filter
        if "complete" in values:
            values["complete"] = values["complete"] == "true"
        return values


class FileOut(serializers.Serializer):
    id = serializers.IntegerField()
    group = serializers.CharField()
    name = serializers.CharField()
    subject = serializers.CharField()
    poster = serializers.CharField()
    date = serializers.IntegerField(help_text="Unix time of the earliest segment.")
    total = serializers.IntegerField(help_text="Segments the file has (from its subject).")
    segments = serializers.IntegerField(help_text="Segments the catalog holds.")
    bytes = serializers.IntegerField()
    complete = serializers.BooleanField()


class FileDetailOut(FileOut):
    file_index = serializers.IntegerField(allow_null=True)
    file_count = serializers.IntegerField(allow_null=True)
    conflicts = serializers.IntegerField(
        help_text="Message-ids reported for a part that already had another one."
    )
    rule_version = serializers.IntegerField()


class FilePageOut(serializers.Serializer):
    count = serializers.IntegerField(help_text="Exact up to 10,000; capped there.")
    count_capped = serializers.BooleanField(help_text="True when more files match than count.")
    next = serializers.CharField(allow_null=True)
    results = FileOut(many=True)
