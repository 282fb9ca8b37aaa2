"""One registry of LLM backends, one factory: a toy backend added by one ``register_backend`` call
is offered and built for both client kinds, the CLI's name tuples come from the registry, and the
shared chat client imports no extractor module."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from spcl.extract.backends import BACKENDS, Extraction, Extractor, make_extractor, registry
from spcl.extract.backends.chat import ChatReply, ChatRequest
from spcl.extract.backends.registry import CHAT_BACKENDS, make_chat

ROOT = Path(__file__).resolve().parents[2]


class ToyExtractor(Extractor):
    """Test double (not a model): answers every document with one fixed row."""

    name = "toy"
    model = "toy-v0"

    def __init__(self, types: tuple[str, ...], **opts: Any) -> None:
        super().__init__()
        self.types, self.opts = types, opts

    def run(self, texts: list[str]) -> list[Extraction]:
        return [Extraction(raw="PHONE\t1") for _ in texts]


class ToyChat:
    """Test double (not a model): echoes the number of messages of each request."""

    def __init__(self, model: str, **opts: Any) -> None:
        self.model, self.opts = model, opts

    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        return [ChatReply(text=str(len(r.messages))) for r in requests]

    def check(self) -> None:
        return None

    def close(self) -> None:
        return None


@pytest.fixture()
def toy_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry with a ``toy`` backend added (restored afterwards)."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    registry.register_backend(
        registry.BackendSpec(
            "toy",
            extractor=lambda model, endpoint, types, opts: ToyExtractor(types, **opts),
            chat=lambda model, endpoint, opts: ToyChat(str(model), **opts),
        )
    )


def test_a_backend_registered_once_is_built_by_both_factories(toy_backend: None) -> None:
    assert "toy" in registry.backend_names("extractor") and "toy" in registry.backend_names("chat")
    ex = make_extractor("toy", model="m", types=("PHONE",), options={"x": 1}, chunk_chars=500)
    # windows
    assert ex.name == "toy" and isinstance(ex.inner, ToyExtractor)  # type: ignore[attr-defined]
    assert ex.inner.types == ("PHONE",) and ex.inner.opts == {"x": 1}  # type: ignore[attr-defined]
    chat = make_chat("toy", model="m", options={"temperature": 0})
    assert isinstance(chat, ToyChat) and chat.opts == {"temperature": 0}
    assert chat.complete([ChatRequest.of([{"role": "user", "content": "hi"}])])[0].text == "1"
    with pytest.raises(ValueError, match="needs --model"):
        make_chat("toy")


def test_unknown_names_list_the_registered_backends(toy_backend: None) -> None:
    with pytest.raises(
        ValueError, match=r"unknown backend 'nope'; choose one of rules, openai, .*toy"
    ):
        make_extractor("nope")
    with pytest.raises(
        ValueError, match=r"unknown chat backend 'rules2'; choose one of openai, .*toy"
    ):
        make_chat("rules2", model="m")


def test_the_name_tuples_come_from_the_registry() -> None:
    from spcl.annotate.teachers import TEACHER_BACKENDS

    assert (
        BACKENDS
        == registry.backend_names("extractor")
        == ("rules", "openai", "transformers", "vllm")
    )
    assert (
        CHAT_BACKENDS
        == TEACHER_BACKENDS
        == registry.backend_names("chat")
        == ("openai", "transformers", "vllm")
    )
    assert make_chat("rules") is None


def _spcl_imports(path: Path) -> set[str]:
    """Every ``spcl.*`` module a source file imports, at the top or inside functions."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("spcl"):
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.startswith("spcl")}
    return names


def test_the_chat_client_imports_no_extractor_module() -> None:
    extractors = {
        "spcl.extract.backends.transformers_backend",
        "spcl.extract.backends.vllm_backend",
        "spcl.extract.backends.openai_backend",
        "spcl.extract.backends.rules_backend",
        "spcl.extract.backends.chunking",
        "spcl.extract.prompt",
    }
    for module in ("chat", "openai_chat", "transformers_chat", "vllm_chat"):
        assert not _spcl_imports(ROOT / f"spcl/extract/backends/{module}.py") & extractors
