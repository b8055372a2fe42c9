"""The CUDA renderers on CuPy, their kernel loader and the GPU primitives."""
