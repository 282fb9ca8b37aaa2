"""The backend registry owns each backend's options: their one spelling, their validation, and which
of the command line's shared option flags a client gets."""

from __future__ import annotations

import argparse
import inspect
import warnings

import pytest

from spcl.commands.generalize import add_generalize_arguments, config_from_args
from spcl.commands.mask import add_mask_arguments, backend_options
from spcl.extract.backends import registry
from spcl.extract.backends.openai_backend import OpenAIExtractor
from spcl.extract.backends.openai_chat import OpenAIChat
from spcl.extract.backends.rules_backend import RulesExtractor
from spcl.extract.backends.transformers_backend import TransformersExtractor
from spcl.extract.backends.transformers_chat import TransformersChat
from spcl.extract.backends.vllm_backend import VLLMExtractor
from spcl.extract.backends.vllm_chat import VLLMChat

CLASSES = {
    ("rules", "extractor"): RulesExtractor,
    ("openai", "extractor"): OpenAIExtractor,
    ("transformers", "extractor"): TransformersExtractor,
    ("vllm", "extractor"): VLLMExtractor,
    ("openai", "chat"): OpenAIChat,
    ("transformers", "chat"): TransformersChat,
    ("vllm", "chat"): VLLMChat,
}


def _keywords(cls: type) -> frozenset[str]:
    """The keyword options a client class takes (not self, the positional model/endpoint, nor
    types)."""
    params = inspect.signature(cls).parameters.values()
    return frozenset(p.name for p in params if p.kind is p.KEYWORD_ONLY and p.name != "types")


@pytest.mark.parametrize(("backend", "kind"), sorted(CLASSES))
def test_declared_options_are_exactly_what_the_client_takes(
    backend: str, kind: registry.Kind
) -> None:
    spec = registry.backend_spec(backend)
    assert spec is not None
    assert spec.options(kind) == _keywords(CLASSES[backend, kind])


def test_max_tokens_is_the_one_name_for_the_token_cap() -> None:
    takers = registry.backends_taking("extractor", "max_tokens")
    assert takers == ("openai", "transformers", "vllm")
    assert not any(registry.takes_option(b, k, "max_new_tokens") for b, k in CLASSES)


def test_the_old_spelling_is_mapped_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match="max_new_tokens is deprecated; use max_tokens"):
        opts = registry.check_options(
            "transformers", "extractor", {"max_new_tokens": 8, "batch_size": 2}
        )
    assert opts == {"max_tokens": 8, "batch_size": 2}
    with pytest.raises(ValueError, match="give max_tokens only"):
        registry.check_options("vllm", "extractor", {"max_new_tokens": 8, "max_tokens": 9})


def test_an_option_a_client_does_not_take_is_refused_before_anything_loads() -> None:
    with pytest.raises(
        ValueError, match=r"the openai backend takes no option device \(its options: .*max_tokens"
    ):
        registry.make_extractor(
            "openai", model="m", endpoint="http://127.0.0.1:9/v1", options={"device": "cpu"}
        )
    with pytest.raises(
        ValueError, match=r"the rules backend takes no option batch_size \(its options: none\)"
    ):
        registry.make_extractor("rules", options={"batch_size": 2})


def _mask_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_mask_arguments(parser)
    return parser.parse_args(["-i", "in", "-o", "out", "--vault", "v", *argv])


def test_mask_flags_become_the_options_each_backend_took_before() -> None:
    flags = (
        "--max-tokens",
        "64",
        "--batch-size",
        "4",
        "--device",
        "cpu",
        "--concurrency",
        "2",
        "--timeout",
        "5",
        "--retries",
        "1",
        "--tensor-parallel-size",
        "2",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecated spelling on the way
        got = {b: backend_options(_mask_args("--backend", b, *flags)) for b in registry.BACKENDS}
    assert got == {
        "rules": {},
        "openai": {"max_tokens": 64, "concurrency": 2, "timeout_s": 5.0, "retries": 1},
        "transformers": {"max_tokens": 64, "batch_size": 4, "device": "cpu"},
        "vllm": {"max_tokens": 64, "batch_size": 4, "tensor_parallel_size": 2},
    }
    adapter = backend_options(_mask_args("--backend", "vllm", "--adapter", "lora/"))
    assert adapter["adapter"] == "lora/"
    with pytest.raises(
        ValueError, match="--adapter is supported by the transformers and vllm backends only"
    ):
        backend_options(_mask_args("--backend", "openai", "--adapter", "lora/"))


def test_generalize_flags_become_the_options_each_backend_took_before() -> None:
    parser = argparse.ArgumentParser()
    add_generalize_arguments(parser)
    got = {}
    for b in registry.GENERALIZE_BACKENDS:
        args = parser.parse_args(
            [
                "-i",
                "in",
                "-o",
                "out",
                "--vault",
                "v",
                "--backend",
                b,
                "--max-tokens",
                "64",
                "--batch-size",
                "4",
                "--device",
                "cpu",
                "--concurrency",
                "2",
            ]
        )
        cfg = config_from_args(args)
        got[b] = (cfg.options, cfg.extract_options)
    assert got == {
        "rules": ({}, {}),
        "openai": (
            {"concurrency": 2, "timeout_s": 120.0, "retries": 3},
            {"max_tokens": 64, "concurrency": 2, "timeout_s": 120.0, "retries": 3},
        ),
        "transformers": ({"batch_size": 4}, {"max_tokens": 64, "batch_size": 4, "device": "cpu"}),
    }


def test_commands_offer_the_registry_choices() -> None:
    assert registry.GENERALIZE_BACKENDS == ("rules", "openai", "transformers")
    assert registry.ATTACK_BACKENDS == ("openai", "transformers")
    assert registry.FALLBACK_BACKENDS == ("rules",)
    assert _mask_args().backend == registry.DEFAULT_BACKEND == "rules"
