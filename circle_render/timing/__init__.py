"""Timing the course's way (frames) and the benchmark record."""
