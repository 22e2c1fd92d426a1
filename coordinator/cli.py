"""`seed-coordinator`: Django's manage.py for an installed coordinator (`pip install .`).

`seed-coordinator serve`, `seed-coordinator migrate`, `seed-coordinator check --deploy`:
the same commands as `python manage.py …` in a checkout. Data goes to DATA_DIR
(default ./var under the current directory), never into site-packages.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "coordinator.settings")
    from django.core.management import execute_from_command_line

    from coordinator.environment import SettingError
    from core.database_faults import EXIT_TEMPFAIL, database_unavailable

    try:
        execute_from_command_line(sys.argv)
    except SettingError as error:
        # A bad variable is the operator's to fix: the sentence, not a traceback.
        sys.stderr.write(f"{Path(sys.argv[0]).name}: {error}\n")
        raise SystemExit(2) from None
    except Exception as error:
        if not database_unavailable(error):
            raise
        # libpq's text repeats itself for every host of a cluster: one sentence instead.
        sys.stderr.write(f"{Path(sys.argv[0]).name}: {database_sentence(error)}\n")
        raise SystemExit(EXIT_TEMPFAIL) from None


def database_sentence(error: BaseException) -> str:
    """What a command says when the database went away or is switching (exit code 75)."""
    from django.db import connections

    from coordinator.database_url import describe_hosts
    from core.database_faults import EXIT_TEMPFAIL, reason

    where = describe_hosts(connections["default"].settings_dict)
    return (
        f"The database ({where}) did not answer as a writable primary ({reason(error)}): "
        "it is down, restarting or switching to a standby. What the command committed "
        f"before is kept; run it again in a few seconds (exit code {EXIT_TEMPFAIL})."
    )
