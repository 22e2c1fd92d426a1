"""DATABASE_URL and DATABASE_REPLICA_URL: libpq's URL of one host or a cluster's several."""

from __future__ import annotations

import pytest

from coordinator.environment import SettingError, database_config

CLUSTER = (
    "postgres://coord:p%40ss@db1:5432,db2:5433,[fd00::3]:5432/coordinator"
    "?target_session_attrs=read-write&connect_timeout=3&keepalives=1&keepalives_idle=10"
)


def test_a_cluster_url_names_every_member_with_its_port_and_the_options() -> None:
    config = database_config(CLUSTER)
    assert config["HOST"] == "db1,db2,fd00::3"
    assert config["PORT"] == "5432,5433,5432"
    assert (config["NAME"], config["USER"], config["PASSWORD"]) == ("coordinator", "coord", "p@ss")
    assert config["OPTIONS"] == {
        "target_session_attrs": "read-write",
        "connect_timeout": "3",
        "keepalives": "1",
        "keepalives_idle": "10",
    }


def test_hosts_without_ports_take_libpqs_default_and_a_socket_directory_is_a_host() -> None:
    assert database_config("postgres://c@db1,db2/x")["PORT"] == ""
    assert database_config("postgres://c@db1,db2:6432/x")["PORT"] == "5432,6432"
    socket = database_config("postgres://c@/x?host=/run/postgresql")
    assert (socket["HOST"], socket["PORT"]) == ("/run/postgresql", "")


def test_the_cluster_url_reaches_libpq_as_it_means() -> None:
    """Django's parameters for it are what libpq reads from the URL itself."""
    from django.db.backends.postgresql.base import DatabaseWrapper
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    wrapper = DatabaseWrapper({**database_config(CLUSTER), "TIME_ZONE": None, "AUTOCOMMIT": True,
                               "CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": True, "ATOMIC_REQUESTS": False})  # fmt: skip
    params = wrapper.get_connection_params()
    ours = conninfo_to_dict(
        make_conninfo(**{k: v for k, v in params.items() if isinstance(v, str | int)})
    )
    theirs = conninfo_to_dict(CLUSTER.replace("postgres://", "postgresql://"))
    for key in ("host", "port", "dbname", "user", "password", "target_session_attrs", "keepalives"):
        assert str(ours[key]) == str(theirs[key]).replace("[", "").replace("]", ""), key


@pytest.mark.parametrize(
    "url",
    [
        # libpq ends the user and password at the first @ before any /: a ? or # in
        # the password is the password's, not a query string or a fragment.
        "postgres://c:Xy7?q=Lm@db1:5432/x",
        "postgres://c:pa#ss?w=1@db1/x?connect_timeout=3",
        # A + in an option is a plus (percent-encoding only, no form encoding).
        "postgres://c:pw@db1/x?sslrootcert=/etc/ssl/a+b.pem&application_name=coord+1",
        "postgres://c:pw@db1/x?options=-c%20statement_timeout%3D5000&sslmode=verify-full",
        # docs/deploy.md's options for a member that vanishes.
        "postgres://c:pw@db1:6432,db2:6432/x?target_session_attrs=read-write&connect_timeout=3"
        "&keepalives=1&keepalives_idle=5&keepalives_interval=2&keepalives_count=3"
        "&tcp_user_timeout=10000",
    ],
)
def test_what_libpq_reads_from_a_url_is_what_the_coordinator_reads(url: str) -> None:
    from psycopg.conninfo import conninfo_to_dict

    config = database_config(url)
    theirs = conninfo_to_dict(url)
    ours = {"user": config["USER"], "password": config["PASSWORD"], "dbname": config["NAME"],
            "host": config["HOST"], **config["OPTIONS"]}  # fmt: skip
    if config["PORT"]:
        ours["port"] = str(config["PORT"])
    assert ours == theirs


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("postgres://c:pw-secret-9@db1,,db2/x", "its second host is empty"),
        ("postgres://c:pw-secret-9@db1,db2:5432,5433/x", "its third host is a number"),
        ("postgres://c:pw-secret-9@db1:99999/x", "the port of its first host is not a number"),
        ("postgres://c:pw-secret-9@db1/x?bogus=1", "option 'bogus' is not one of libpq's"),
        ("postgres://c:pw-secret-9@db1/x?target_session_attrs=writable", "is not one of any, read-write"),
        ("postgres://c:pw-secret-9@db1/x?connect_timeout=soon", "connect_timeout='soon' is not a whole number"),
        ("postgres://c:pw-secret-9@db1/x?keepalives=yes", "keepalives='yes' is not one of 0, 1"),
        ("postgres://c:pw-secret-9@db1/x?password=pw-secret-9", "names password in the query string"),
        ("postgres://c:pw-secret-9@db1/x?sslmode=require&sslmode=disable", "gives the option sslmode twice"),
        ("postgres://c:pw-secret-9@db1,db2", "it names no database"),
        ("postgres://c:pw-secret-9@db1/x?port=1,2,3", "it names 1 hosts and 3 ports"),
        ("postgres://c:pw-secret-9%G1@db1/x", "its password holds a % not followed by two hex"),
    ],
)  # fmt: skip
def test_a_url_that_cannot_be_read_says_what_is_wrong_without_the_password(
    url: str, problem: str
) -> None:
    with pytest.raises(SettingError) as refused:
        database_config(url)
    assert problem in str(refused.value)
    assert "pw-secret-9" not in str(refused.value)
    assert str(refused.value).startswith("The setting DATABASE_URL is not a postgres:// URL")


def test_the_replica_url_is_named_in_its_own_sentence() -> None:
    with pytest.raises(SettingError, match="The setting DATABASE_REPLICA_URL is not"):
        database_config("mysql://r@db3/x", "DATABASE_REPLICA_URL")


def test_with_no_database_url_a_newcomer_gets_the_embedded_server_and_no_replica(tmp_path) -> None:
    """`make run` with no setup: the embedded PostgreSQL, every read on it, nothing to route."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "DATA_DIR": str(tmp_path), "PYTHONPATH": str(root)}
    for name in ("DATABASE_URL", "DATABASE_REPLICA_URL", "DJANGO_SETTINGS_MODULE"):
        env.pop(name, None)
    shown = (
        "import coordinator.settings as s;"
        "print(sorted(s.DATABASES), s.DATABASES['default']['ENGINE'], s.EMBEDDED_DATABASE,"
        " s.DATABASE_ROUTERS)"
    )
    done = subprocess.run(
        [sys.executable, "-c", shown],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path, check=True,
    )  # fmt: skip
    assert done.stdout.split() == [
        "['default']", "core.embedded_postgres", "True", "['core.replicas.PrimaryRouter']",
    ]  # fmt: skip
