"""A simulated fleet of seed nodes for load tests (fleet.py): the standard library
and usenet's number reader only.

Its own package, beside the agent: it speaks the node API as any node author
would and imports nothing of the coordinator. `manage.py simulate_fleet`
(the console's command) and `bench/bench_fleet.py` run it.
"""
