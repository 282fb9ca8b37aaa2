"""Benchmarks and their helpers: commands that print docs/s per core and peak memory, never tests.

Nothing in the library imports this package; it imports the library. ``filter`` times the filter job
(plain Python vs Spark), ``screen`` the screen model path on one core, ``gpu_check`` the LLM stage
on a GPU, ``tiny_model`` writes a random-weight chat model for plumbing checks.
"""

ANCHOR_SCREEN_DOCS_PER_CORE = 266.0
"""Published LightGBM TF-IDF screen: 184 M documents a day on 8 cores (≈266 docs/s per core)."""
