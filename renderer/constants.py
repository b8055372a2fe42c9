"""Constants shared by Python and the CUDA kernels (they reach the kernels as -D options)."""

TILE_SIZE = 16                       # tiles are TILE_SIZE x TILE_SIZE pixels, one thread per pixel
BLOCK_THREADS = TILE_SIZE * TILE_SIZE
SCAN_BLOCK = 1024                    # threads per block of the standalone scan kernels


def compile_defines() -> dict[str, int]:
    """The -D macros every kernel module is compiled with."""
    return {"TILE_SIZE": TILE_SIZE, "BLOCK_THREADS": BLOCK_THREADS, "SCAN_BLOCK": SCAN_BLOCK}
