"""The fault suite reads the agents' retry warnings as the agent writes them.

harness.agent_waits (what every fault run reports as `statuses`: the answers
the agents retried) parses each agent's log with harness.RETRY. Once the
agent's log format named its process and thread, the pattern matched no line
and every "the agents retried only 503s" check held by reading nothing.
"""

from __future__ import annotations

import subprocess
import sys

from tests.chaos import harness

# seed_node/http.py's retry warnings, logged through the agent's own logging setup.
SCRIPT = """
import logging, threading
from seed_node.assembly import configure_logging
configure_logging("info")
log = logging.getLogger("seed_node.http")
def warn():
    log.warning("%s %s: coordinator %s unavailable (%s); retrying in %.1fs",
                "POST", "/ranges/17/batch", "http://127.0.0.1:8000", 503, 5.0)
    log.warning("%s %s: coordinator %s unreachable (%s); retrying in %.1fs",
                "POST", "/groups/lease", "http://127.0.0.1:8001", "timed out", 0.5)
thread = threading.Thread(target=warn, name="reporter")
thread.start()
thread.join()
"""


def test_the_retry_pattern_reads_the_agents_own_warnings() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True
    )
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    found = [harness.RETRY.match(line) for line in lines]
    assert all(found), lines
    assert [m.groups()[1:] for m in found if m] == [
        ("POST /ranges/17/batch", "unavailable", "503", "5.0"),
        ("POST /groups/lease", "unreachable", "timed out", "0.5"),
    ]
