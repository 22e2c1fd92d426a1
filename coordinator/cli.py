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

    try:
        execute_from_command_line(sys.argv)
    except SettingError as error:
        # A bad variable is the operator's to fix: the sentence, not a traceback.
        sys.stderr.write(f"{Path(sys.argv[0]).name}: {error}\n")
        raise SystemExit(2) from None
