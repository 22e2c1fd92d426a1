"""Test support shared by the suites: a real INN2 server harness and article generators."""
