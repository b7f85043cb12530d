"""Compiled circuits: record a circuit's constraints and witness program once, then build each
proof's witness from its inputs alone (see :mod:`.compiled`)."""
