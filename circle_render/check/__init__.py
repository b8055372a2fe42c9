"""The machinery of `render check`: loading renderers, the reference image cache, checking a scene."""
