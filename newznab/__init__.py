"""The newznab API (`/api`, `/rss`): what Sonarr, Radarr, Prowlarr and NZBHydra2 search.

Its own users and keys (not nodes), a per-key rate limit kept in PostgreSQL,
RSS 2.0 with the newznab namespace (or JSON), searches over the catalog's
releases. docs/newznab.md.
"""
