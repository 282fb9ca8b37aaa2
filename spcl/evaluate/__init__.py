"""Evaluation: metrics that judge extraction and masking (``masking``); others may add more
modules."""

from spcl.evaluate.masking import EvalError, evaluate_documents, evaluate_masking

__all__ = ["EvalError", "evaluate_documents", "evaluate_masking"]
