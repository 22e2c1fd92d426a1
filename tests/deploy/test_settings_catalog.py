"""coordinator/settings.toml: every variable declared once, read by its type, refused out of bounds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.checks import run_checks
from django.test import override_settings

from coordinator import environment
from coordinator.environment import Environment, SettingError, database_config

ROOT = Path(__file__).resolve().parents[2]


def value(name: str, raw: str) -> object:
    return Environment({name: raw})(name, data_dir=Path("/data"))


@pytest.mark.parametrize(
    ("name", "raw", "says"),
    [
        ("PLAN_RANGE_SIZE", "0", "must be at least 1"),
        ("LEASE_TTL_SECONDS", "0", "must be at least 1"),
        ("LEASE_MAX_PER_NODE", "-1", "'-1' must be at least 0"),  # what was typed
        ("SNAPSHOT_DIR", "$HOME/snapshots", "names another variable"),
        ("SNAPSHOT_DIR", "~no-such-user-here/x", "names a home directory that cannot be found"),
        ("LEASE_TTL_SECONDS", "3000000000", "must be at most 2147483647"),
        ("NEWS_POOL_WAIT_SECONDS", "1e10", "must be at most 31536000"),  # Condition.wait overflows
        ("ROLLUP_MINUTES_KEEP_HOURS", "2147483647", "must be at most 87600"),
        (
            "SECRET_KEY",
            "$UNSET_SHARED_KEY",
            "names the variable UNSET_SHARED_KEY, which is not set",
        ),
        ("MAX_ATTEMPTS", "9" * 100, "'" + "9" * 40 + "...' must be at most 2147483647"),
        ("LEASE_TTL_SECONDS", "15m", "must be a whole number"),
        ("MAX_ATTEMPTS", "2.5", "must be a whole number"),
        ("API_QUEUE_MAX_SECONDS", "nan", "must be a finite number"),
        ("API_QUEUE_MAX_SECONDS", "-1", "must be at least 0"),
        ("DEBUG", "maybe", "must be 1, true, yes or on, or 0, false, no or off"),
        ("SNAPSHOT_STORAGE", "ftp", "must be one of filesystem, s3"),
        ("SNAPSHOT_URL_SECONDS", "0", "must be at least 1"),
        ("NNTP_MAX_CONNECTIONS", "-1", "must be at least 0"),
        ("CATALOG_PAGE_SIZE", "5000", "must be at most 1000"),
        ("LOG_FORMAT", "xml", "must be one of plain, json"),
        ("METRICS_ALLOW_IPS", "10.0.0.0/8, localhost", "holds 'localhost', not an address or a"),
        ("DEFAULT_PRIORITY", str(2**31), "must be at most 2147483647"),
    ],
)
def test_a_bad_value_is_refused_with_a_sentence_naming_it(name, raw, says):
    with pytest.raises(SettingError) as refused:
        value(name, raw)
    message = str(refused.value)
    assert message.startswith(f"The setting {name}=")
    assert says in message
    assert "docs/settings.md" in message


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    [
        ("LEASE_MAX_PER_NODE", "", 64),  # empty number: the default
        ("LEASE_MAX_PER_NODE", " 0 ", 0),
        ("PLAN_RANGE_SIZE", "50_000", 50_000),
        ("NEWS_POOL_WAIT_SECONDS", "2.5", 2.5),
        ("DEBUG", "Yes", True),
        ("DEBUG", "off", False),
        ("DB_PREPARE", "", False),  # an empty flag is off, as django-environ read it
        ("WEB_TIMEOUT", "0", 0),  # gunicorn: no timeout
        ("LOG_LEVEL", "warn", "WARN"),
        ("LOG_FORMAT", "JSON", "json"),
        ("LOG_LEVEL", "warning", "WARNING"),
        ("METRICS_ALLOW_IPS", "", []),  # empty list: no address
        ("METRICS_ALLOW_IPS", "10.0.0.0/8, ::1", ["10.0.0.0/8", "::1"]),
        ("ALLOWED_HOSTS", "a.example, b.example,", ["a.example", "b.example"]),
        ("SNAPSHOT_DIR", "", Path("/data/snapshots")),  # relative default under DATA_DIR
        ("SNAPSHOT_DIR", "shared/snapshots", Path("/data/shared/snapshots")),
        ("SNAPSHOT_DIR", "/srv/snapshots", Path("/srv/snapshots")),
        ("SNAPSHOT_DIR", "$DATA_DIR/elsewhere", Path("/data/elsewhere")),  # old .env.example
        ("EMBEDDED_DATABASE_DIR", "${DATA_DIR}/pg2", Path("/data/pg2")),
        ("METRICS_TOKEN", "", ""),
    ],
)
def test_values_are_read_by_their_type(name, raw, expected):
    assert value(name, raw) == expected


def test_a_value_naming_another_variable_reads_it():
    env = Environment({"SECRET_KEY": "$SHARED_KEY", "SHARED_KEY": "k3y", "MAX_ATTEMPTS": "${N}",
                       "N": "7", "METRICS_TOKEN": "a$b"})  # fmt: skip
    assert env("SECRET_KEY") == "k3y"
    assert env("MAX_ATTEMPTS") == 7
    assert env("METRICS_TOKEN") == "a$b"  # a $ inside a value is the value


def test_an_unset_variable_takes_its_default():
    env = Environment({})
    values = env.settings(data_dir=Path("/data"))
    assert values["LEASE_TTL_SECONDS"] == 900
    assert values["ALLOWED_HOSTS"] == ["localhost", "127.0.0.1", "[::1]", "testserver"]
    values["ALLOWED_HOSTS"].append("changed")
    assert env("ALLOWED_HOSTS") == ["localhost", "127.0.0.1", "[::1]", "testserver"]


def test_the_running_settings_are_the_catalogs():
    """Each variable that names a Django setting sets it, and nothing sets it again later."""
    env = Environment()
    # Django's test set-up adds a host and turns debug off itself.
    changed_by_the_test_runner = {"ALLOWED_HOSTS", "DEBUG"}
    for name, expected in env.settings(data_dir=Path(settings.VAR_DIR)).items():
        if name not in changed_by_the_test_runner:
            assert getattr(settings, name) == expected, name


def test_every_variable_settings_py_reads_is_declared_and_every_declared_one_is_read():
    source = (ROOT / "coordinator" / "settings.py").read_text(encoding="utf-8")
    read = set(re.findall(r'\benv\("([A-Z0-9_]+)"', source))
    variables = environment.load()
    assert read <= set(variables), read - set(variables)
    by_settings_py = {n for n, v in variables.items() if not v.setting and not v.read_by}
    assert by_settings_py == read - {n for n, v in variables.items() if v.setting}


def test_a_malformed_catalog_is_refused(tmp_path):
    catalog = tmp_path / "settings.toml"
    catalog.write_text('[a]\ntitle = "A"\n[a.X]\ntype = "int"\ndefault = 0\nmin = 1\n'
                       'meaning = "x"\n', encoding="utf-8")  # fmt: skip
    with pytest.raises(ValueError, match="X's default is out of its bounds"):
        environment.load(catalog)
    catalog.write_text('[a]\ntitle = "A"\n[a.X]\ntype = "int"\ndefault = "5"\nmeaning = "x"\n')
    with pytest.raises(ValueError, match="X's default is not a int"):
        environment.load(catalog)
    catalog.write_text('[a]\ntitle = "A"\n[a.X]\ntype = "int"\ndefault = true\nmeaning = "x"\n')
    with pytest.raises(ValueError, match="X's default is not a int"):
        environment.load(catalog)
    catalog.write_text('[a]\ntitle = "A"\n[a.X]\ntype = "integer"\nmeaning = "x"\n')
    with pytest.raises(ValueError, match="X needs a known type"):
        environment.load(catalog)


def test_docs_settings_md_is_written_from_the_catalog():
    written = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert written == environment.markdown(environment.load()), "run `make settings-doc`"


def manage_check(tmp_path: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATA_DIR": str(tmp_path), **variables}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "check"],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )  # fmt: skip


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///x.db",
        "mysql://app:pw-secret-9@db/app",
        "postgres://app:pw-secret-9/x@db/app",  # an unencoded / makes the password a port
        "postgres://app:pw-secret-9@[db/app",
    ],
)
def test_a_database_url_that_cannot_be_read_is_refused_without_its_password(url):
    with pytest.raises(SettingError, match="DATABASE_URL is not a postgres:// URL") as refused:
        database_config(url)
    assert "pw-secret-9" not in str(refused.value)


@pytest.mark.slow
def test_a_database_url_stops_the_start_with_the_sentence(tmp_path):
    done = manage_check(tmp_path, DATABASE_URL="postgres://app:pw-secret-9/x@db/app")
    assert done.returncode == 2
    assert "DATABASE_URL is not a postgres:// URL" in done.stderr
    assert "pw-secret-9" not in done.stderr and "Traceback" not in done.stderr


def test_a_postgres_url_of_any_of_its_schemes_is_read():
    for scheme in ("postgres", "postgresql", "psql", "pgsql", "postgis"):
        config = database_config(f"{scheme}://app:p%2Fw@db.example:6432/idx?sslmode=require")
        assert config["ENGINE"] == "core.postgres"
        assert (config["HOST"], config["PORT"], config["NAME"]) == ("db.example", 6432, "idx")
        assert config["PASSWORD"] == "p/w"
        assert config["OPTIONS"] == {"sslmode": "require"}


def test_a_relative_data_dir_is_made_absolute_where_the_coordinator_starts(tmp_path):
    env = {**os.environ, "DATA_DIR": "relative-data", "PYTHONPATH": str(ROOT)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-c", "import coordinator.settings as s; print(s.VAR_DIR, s.SNAPSHOT_DIR)"],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path, check=True,
    )  # fmt: skip
    data = tmp_path / "relative-data"
    assert done.stdout.split() == [str(data), str(data / "snapshots")]


@pytest.mark.slow
def test_the_command_line_says_the_sentence_without_a_traceback(tmp_path):
    done = manage_check(tmp_path, PLAN_RANGE_SIZE="0")
    assert done.returncode == 2
    assert done.stderr.startswith("manage.py: The setting PLAN_RANGE_SIZE='0' must be at least 1")
    assert "Traceback" not in done.stderr


def test_s3_snapshots_without_a_bucket_stop_the_start(tmp_path):
    done = manage_check(tmp_path, SNAPSHOT_STORAGE="s3", SNAPSHOT_S3_BUCKET="")
    assert done.returncode == 2
    assert "SNAPSHOT_STORAGE=s3 needs SNAPSHOT_S3_BUCKET" in done.stderr


@pytest.mark.parametrize(
    ("overrides", "check_id"),
    [
        ({"TAIL_PRIORITY": 100, "DEFAULT_PRIORITY": 100}, "indexer.E005"),
        ({"LEASE_PRIORITY_MIN": 5, "LEASE_PRIORITY_MAX": 4}, "indexer.E010"),
        ({"NEWZNAB_DEFAULT_LIMIT": 200, "NEWZNAB_MAX_LIMIT": 100}, "indexer.W003"),
        ({"LEASE_TTL_SECONDS": 5}, "indexer.E001"),
    ],
)
def test_settings_that_disagree_fail_a_system_check(overrides, check_id):
    assert check_id not in {m.id for m in run_checks()}
    with override_settings(**overrides):
        assert check_id in {m.id for m in run_checks()}
