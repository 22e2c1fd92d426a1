"""Test support shared by the suites: a real INN2 server harness, article generators,
a system PostgreSQL cluster, free loopback ports and threads that start together."""
