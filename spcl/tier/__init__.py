"""The tier: a small pretrained multilingual encoder plus a trained head that rescores the documents
the screen flagged without any detector hit, before the LLM stage. ``load_tier(path).passes(texts,
langs)`` → True for the documents that go on to the LLM; those it clears leave the LLM path as
clean, with the reason recorded."""

from spcl.tier.encoders import TierEncoderError
from spcl.tier.model import Tier, TierModelError, load_tier

__all__ = ["Tier", "TierEncoderError", "TierModelError", "load_tier"]
