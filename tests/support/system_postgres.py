"""A throwaway cluster of the machine's own PostgreSQL (Debian's, with contrib).

The embedded server (pgserver) ships no contrib extensions, so what depends on
one — the catalog's trigram index — is tested against a cluster of the
system's binaries, started here in a temporary directory and removed after.
`.ci/install-postgresql` installs the binaries on a fresh machine.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

RUN_AS = "postgres"  # initdb refuses to run as root


def system_bin_dir() -> Path:
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parts[-3])
    )
    if not versions:
        raise RuntimeError(
            "No system PostgreSQL found under /usr/lib/postgresql: run .ci/install-postgresql."
        )
    return versions[-1].parent


class SystemPostgres:
    def __init__(self) -> None:
        self.bin = system_bin_dir()
        self.root = Path(tempfile.mkdtemp(prefix="syspg-"))
        self.data = self.root / "data"
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam(RUN_AS)
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self._as_user = ["runuser", "-u", RUN_AS, "--"]

    def _run(self, *args: str) -> None:
        subprocess.run([*self._as_user, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> SystemPostgres:
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres")
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            f"-c listen_addresses='' -k {self.root} -c fsync=off",
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@/{database}?host={quote(str(self.root), safe='/')}"

    def conninfo(self, database: str = "postgres") -> dict[str, str]:
        return {"host": str(self.root), "user": "postgres", "dbname": database}

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> SystemPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
