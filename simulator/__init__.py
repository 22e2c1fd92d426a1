"""A simulated fleet of seed nodes for load tests, standard library only (fleet.py).

Its own package, beside the agent: it speaks the node API as any node author
would and imports nothing of the coordinator. `manage.py simulate_fleet`
(the console's command) and `bench/bench_fleet.py` run it.
"""
