"""The catalog: files stitched from the segments seed nodes report, and rule sets.

models.py, services.py (writes: merging
batches, publishing rule sets, pruning), selectors.py (reads: lists, lookups,
NZB documents), api.py (HTTP), admin.py (the operator console). SQL beyond a
filter is in sql/catalog.sql. docs/catalog.md explains the storage layout.
"""
