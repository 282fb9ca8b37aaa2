"""Subcommands of the ``spcl`` console script; each module exposes ``register(subparsers)``."""
