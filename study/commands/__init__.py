"""`study` commands that live in a module of their own; study/cli.py adds each to the group."""
