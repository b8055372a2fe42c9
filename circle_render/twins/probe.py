"""kernels/probe.cu has no twin: ``spin`` only busy-waits (benchmarks queue it so that the
kernels behind it start back to back)."""

NO_TWIN = {"spin": "a timing aid: it busy-waits and computes nothing"}
