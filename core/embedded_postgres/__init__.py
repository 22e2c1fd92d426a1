"""A Django database backend that starts the embedded PostgreSQL on first connect.

Selected by settings when DATABASE_URL is unset. It is the coordinator's
PostgreSQL backend (core/postgres) in every other respect.
"""
