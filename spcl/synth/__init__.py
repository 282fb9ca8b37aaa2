"""Seeded synthetic data: the sample corpus (``corpus``) and the PII extraction set (``pii``)."""
