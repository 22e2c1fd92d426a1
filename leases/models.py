"""Group leases (window indexing): see the window-indexing issue."""
