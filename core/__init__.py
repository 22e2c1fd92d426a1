"""The core app: what every domain app stands on, with no domain models of its own.

The SQL registry (`sql/`) and psycopg's array dumpers (`pgarrays.py`), the
domain errors (`errors.py`), the HTTP edge (`api/`: error mapping, parsers,
middleware, permissions, the docs page), the runtime (`embedded_postgres/`,
`manage.py serve`, `startup.py`, the gunicorn worker, crash points, the
throttle), logging and metrics helpers, and the admin kit (`admin_tools.py`,
`admin_credentials.py`). It imports no app of this project (docs/architecture.md).
"""
