"""What the coordinator and the seed node share, with no Django: the NNTP client
and pool, overview parsing, subject rules and the limits of what a node reports.

Both sides import this package; it imports only the standard library
(docs/architecture.md).
"""
