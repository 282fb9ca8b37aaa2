"""A module that prints when imported (tests/spark/test_startup.py: the daemon's stdout carries
only its port)."""

print("noisy import")
