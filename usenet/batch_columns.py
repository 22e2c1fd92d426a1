"""The columnar form of a batch's files (docs/api.md, "The columnar form").

One list per File field (one value per file), the count of each file's
segments, then one list per segment field with every file's segments end to
end. Defined once here: the agent (seed_node/reporting.py) and the fleet
simulator send it, the coordinator (catalog/validation.py) reads it.
"""

from __future__ import annotations

from typing import Any

FILE_COLUMNS = ("subject", "poster", "date", "total")  # one value per file
COUNT_COLUMN = "segments"  # each file's number of segments
SEGMENT_COLUMNS = ("part", "article", "message_id", "bytes")  # a segment's [p, a, id, bytes]
COLUMNS = (*FILE_COLUMNS, COUNT_COLUMN, *SEGMENT_COLUMNS)


def columnar(files: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Files (File objects: a dict per file, its segments as [part, article,
    message-id, bytes]) in the columnar form. The coordinator decodes and checks
    it in about a third of the CPU File objects take (docs/performance.md)."""
    columns = {key: [item[key] for item in files] for key in FILE_COLUMNS}
    columns[COUNT_COLUMN] = [len(item["segments"]) for item in files]
    segments = [segment for item in files for segment in item["segments"]]
    for index, key in enumerate(SEGMENT_COLUMNS):
        columns[key] = [segment[index] for segment in segments]
    return columns
