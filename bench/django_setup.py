"""Set up Django for a benchmark on a database of its own.

With DATABASE_URL unset the embedded server is used, with a database named
after the benchmark, so benchmarks never touch the development data. The
database is migrated before use.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup(database: str) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "coordinator.settings")
    if not os.environ.get("DATABASE_URL"):
        os.environ["EMBEDDED_DATABASE_NAME"] = database
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
