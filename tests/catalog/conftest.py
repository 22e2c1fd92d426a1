"""The catalog tests' shared fixture: three stored releases (tests/support/releases.py)."""

from tests.support.releases import releases  # noqa: F401  (a fixture)
