"""The coordinator's PostgreSQL backend: Django's, with a health check that asks
the server only when the server has said something (`base.DatabaseWrapper`)."""
