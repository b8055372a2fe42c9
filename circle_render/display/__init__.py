"""Showing frames: 8-bit conversion and the interactive viewer."""
