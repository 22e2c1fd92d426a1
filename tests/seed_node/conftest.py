"""The inspecting agent's tests fetch from INN2: the shared INN fixtures."""

from tests.support.fixtures import inn_reader, inn_server  # noqa: F401
