#!/usr/bin/env python
"""Django's command-line entry point for the coordinator (installed: `seed-coordinator`)."""

from __future__ import annotations

from coordinator.cli import main

if __name__ == "__main__":
    main()
