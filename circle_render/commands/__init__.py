"""The bodies of the `render` commands; circle_render/cli.py declares their options."""
