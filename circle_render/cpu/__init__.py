"""The CPU reference: shading, animation and the serial-order renderer (NumPy)."""
