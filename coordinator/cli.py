"""`seed-coordinator`: Django's manage.py for an installed coordinator (`pip install .`).

`seed-coordinator serve`, `seed-coordinator migrate`, `seed-coordinator check --deploy`:
the same commands as `python manage.py …` in a checkout. Data goes to DATA_DIR
(default ./var under the current directory), never into site-packages.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "coordinator.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
