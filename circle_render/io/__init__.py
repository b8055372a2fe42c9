"""Files in and out: images (PNG, PPM, GIF) and scene files (.par, .circles)."""
