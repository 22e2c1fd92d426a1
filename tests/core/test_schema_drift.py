"""The schema files hold the live SQL: every function, view and trigger the
migrations leave in the database is defined, the same, in one app's
sql/schema.sql (docs/architecture.md, "Conventions").

Inside the test's transaction (rolled back): read every definition, run every
schema file (CREATE OR REPLACE ...), read them again. A definition the run
changed differs between the migrations and the files; an object that is in
the database but in no file (or in a file but not in the database) is named
too.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from django.apps import apps
from django.db import connection

from core.sql import SCHEMA_FILE, Queries

pytestmark = pytest.mark.django_db

queries = Queries(Path(__file__).with_name("schema_objects.sql"))
CREATED = re.compile(r"^CREATE OR REPLACE (FUNCTION|VIEW|TRIGGER) (\w+)", re.MULTILINE)


def schema_files() -> list[Path]:
    """Each app's sql/schema.sql, in the order the apps are installed."""
    files = [Path(app.path) / "sql" / SCHEMA_FILE for app in apps.get_app_configs()]
    return [file for file in files if file.exists()]


def defined_in_files() -> Counter[tuple[str, str]]:
    """(kind, name) of every object the schema files create, with how many times."""
    return Counter(
        (kind.lower(), name)
        for file in schema_files()
        for kind, name in CREATED.findall(file.read_text(encoding="utf-8"))
    )


def definitions() -> dict[str, str]:
    return {row.object: row.definition for row in queries.fetchall("schema_objects", {})}


def drift() -> list[str]:
    """What differs between the migrated database and the schema files (nothing: [])."""
    problems = [
        f"{kind} {name} is defined in {count} schema files"
        for (kind, name), count in defined_in_files().items()
        if count > 1
    ]
    in_database = {(row.kind, row.name) for row in queries.fetchall("schema_objects", {})}
    in_files = set(defined_in_files())
    problems += [f"{kind} {name} is in no schema file" for kind, name in in_database - in_files]
    problems += [f"{kind} {name} is not in the database" for kind, name in in_files - in_database]
    migrated = definitions()
    with connection.cursor() as cursor:
        for file in schema_files():
            cursor.execute(file.read_text(encoding="utf-8"))
    from_files = definitions()
    problems += [
        f"{name} differs: the migrations made it other than the schema files say"
        for name in sorted(migrated.keys() & from_files.keys())
        if migrated[name] != from_files[name]
    ]
    problems += [
        f"{name} is added by the schema files" for name in from_files.keys() - migrated.keys()
    ]
    return sorted(problems)


def test_every_function_view_and_trigger_is_as_the_schema_files_define_it():
    assert drift() == []


def test_each_app_with_live_sql_has_its_schema_file():
    owners = {file.parent.parent.name for file in schema_files()}
    assert owners == {"core", "catalog", "seeding", "leases", "newznab"}


def run(statement: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement)


def test_a_function_a_migration_changed_but_the_schema_files_did_not_is_drift():
    # As a migration would: rate_hit's body changed, the schema file left alone.
    source = (Path(apps.get_app_config("core").path) / "sql" / SCHEMA_FILE).read_text()
    changed = source.replace("THEN 1 ELSE b.hits + 1 END", "THEN 1 ELSE b.hits + 2 END")
    assert changed != source
    run(changed)
    assert drift() == [
        "rate_hit(text,integer) differs: the migrations made it other than the schema files say"
    ]


def test_a_trigger_a_migration_changed_is_drift():
    run(
        "CREATE OR REPLACE TRIGGER group_catalog_summary_truncate AFTER TRUNCATE ON catalog_file"
        " FOR EACH STATEMENT EXECUTE FUNCTION group_catalog_summary_deleted()"
    )
    assert drift() == [
        "group_catalog_summary_truncate ON catalog_file differs: the migrations made it other"
        " than the schema files say"
    ]


def test_a_function_only_a_migration_made_is_drift():
    run("CREATE FUNCTION made_by_a_migration() RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$")
    assert drift() == ["function made_by_a_migration is in no schema file"]


def test_a_view_a_migration_dropped_is_drift():
    run("DROP VIEW seed_range_hold CASCADE")
    problems = drift()
    assert "view seed_range_hold is not in the database" in problems
