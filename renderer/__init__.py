"""circle-render: the course's circle renderer in Python (NumPy reference, CUDA on CuPy)."""
