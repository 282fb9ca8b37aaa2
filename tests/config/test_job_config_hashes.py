"""The file jobs' configs keep their hashes and their field order: a release hash names what a
released document holds, and ``to_json`` is what Spark workers read back, so a refactor of the
config classes (a shared base, moved fields) must leave both byte for byte as they were."""

from __future__ import annotations

import hashlib

from spcl.generalize.config import GeneralizeJobConfig
from spcl.mask_stage.config import MaskJobConfig


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_default_mask_config_hashes_and_order_are_pinned() -> None:
    cfg = MaskJobConfig("in", "out", "vault", run_id="r")
    assert cfg.release_hash() == "363c456a4d522618"
    assert cfg.config_hash() == "81af0d1ed496b8ac"
    assert list(MaskJobConfig.model_fields) == [
        "input",
        "output",
        "vault",
        "backend",
        "model",
        "endpoint",
        "fallback",
        "batch_size",
        "types",
        "options",
        "chunk_chars",
        "names",
        "allow_names",
        "deny_names",
        "retry_failed",
        "run_id",
        "operators",
        "tier",
        "tier_backend",
        "tier_encoder_dir",
    ]
    assert _digest(cfg.to_json()) == "3ec1122b8f61f2df"


def test_default_generalize_config_hash_and_order_are_pinned() -> None:
    cfg = GeneralizeJobConfig("in", "out", "vault", run_id="r")
    assert cfg.release_hash() == "02c613504bf6c7ef"
    assert list(GeneralizeJobConfig.model_fields) == [
        "input",
        "output",
        "vault",
        "backend",
        "model",
        "endpoint",
        "batch_size",
        "types",
        "options",
        "extract_options",
        "settings",
        "extract_backend",
        "names",
        "run_id",
    ]
    assert _digest(cfg.to_json()) == "61f26998649af0b1"


def test_a_set_mask_and_generalize_config_keep_their_hashes() -> None:
    common = {
        "backend": "openai",
        "model": "m",
        "endpoint": "http://x",
        "options": {"adapter": "a", "timeout": 3},
        "types": ("PERSON", "PHONE"),
        "batch_size": 8,
        "run_id": "r",
    }
    mask = MaskJobConfig(
        "in", "out", "vault", fallback="rules", operators={"PHONE": "hash"}, **common
    )
    gen = GeneralizeJobConfig(
        "in", "out", "vault", settings={"guesses": 3}, extract_backend="rules", **common
    )
    assert (mask.release_hash(), mask.config_hash()) == ("d6423d3e39d5866e", "a0004a5e6df5f478")
    assert gen.release_hash() == "d62f4e9ce9df9ac0"
