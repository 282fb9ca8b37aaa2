"""spcl — corpus-scale filter for sensitive personal information (Japanese, Korean, English)."""

__version__ = "0.1.0"
