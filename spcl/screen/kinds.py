"""The screen-kind registry: what a screen model returns, and which loader reads an artifact of each
kind.

A screen model *kind* is one module: it subclasses nothing, it registers a loader by name
(:func:`register_kind`) and its loaded object answers ``predict(texts, langs) -> ScreenResult`` and
``outputs`` / ``version``. The artifact's ``model_card.json`` names its kind (``"kind"``, default
``lgbm_svc``, the shipped LightGBM ∪ LinearSVC stack) and may name its outputs (``"outputs"``:
``{"scores": [...], "flags": [...]}``); the filter's ``scores`` column, its ``screen:NAME`` reasons
and the batch function are built from those names, so nothing else needs editing for a new kind.

A kind not registered in-process is looked up among the installed ``spcl.screen_kinds`` entry points
(an installed package's module, never code named by the model file itself).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from spcl import artifacts
from spcl.errors import RunFailed

DEFAULT_KIND = "lgbm_svc"
"""The kind of a card that names none (every card written before the registry)."""
ENTRY_POINT_GROUP = "spcl.screen_kinds"
CARD = artifacts.CARD


class ScreenModelError(RunFailed, RuntimeError):
    """A screen artifact is missing, corrupt or incompatible; the message names the file and the
    cause."""


@dataclass(frozen=True)
class ScreenOutputs:
    """The names of a kind's per-document scores and flags, in column order.

    The ``scores`` struct of the filter output has one ``float32`` field per score name, then one
    ``NAME_flag`` boolean per flag name, then the category scores; reasons are ``screen:NAME``.
    """

    scores: tuple[str, ...]
    flags: tuple[str, ...]

    @classmethod
    def from_card(cls, card: Mapping[str, Any], default: ScreenOutputs) -> ScreenOutputs:
        """The card's ``outputs`` (``{"scores": [...], "flags": [...]}``), else ``default``.

        >>> card = {"outputs": {"scores": ["kw"], "flags": ["kw"]}}
        >>> ScreenOutputs.from_card(card, LGBM_SVC_OUTPUTS)
        ScreenOutputs(scores=('kw',), flags=('kw',))
        """
        raw = card.get("outputs")
        if raw is None:
            return default
        if not isinstance(raw, Mapping):
            raise ScreenModelError("model card 'outputs' is not an object")
        out = cls(
            tuple(str(s) for s in raw.get("scores", ())),
            tuple(str(f) for f in raw.get("flags", ())),
        )
        names = [*out.scores, *(f"{f}_flag" for f in out.flags)]
        if (
            not out.flags
            or len(set(names)) != len(names)
            or not all(n.isidentifier() for n in names)
        ):
            raise ScreenModelError(
                "model card 'outputs' needs at least one flag and distinct identifier names"
            )
        return out


LGBM_SVC_OUTPUTS = ScreenOutputs(scores=("lgbm", "svc"), flags=("lgbm", "svc"))


@dataclass(frozen=True)
class ScreenResult:
    """Per-document screen output; every array has one entry per input text.

    ``flag`` is the union of ``flags`` (one boolean array per model that can flag, by name);
    ``scores`` holds each named score (float32); ``categories`` maps MEDICAL, CRIME, DISABILITY and
    OTHER to a probability-like score in [0, 1]. The shipped kind's names are ``lgbm`` and ``svc``
    (LightGBM's probability, the LinearSVC margin), also readable as
    ``lgbm_score``/``lgbm_flag``/``svc_score``/``svc_flag``.
    """

    flag: np.ndarray
    scores: dict[str, np.ndarray]
    flags: dict[str, np.ndarray]
    categories: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.flag.shape[0])

    @property
    def lgbm_score(self) -> np.ndarray:
        """LightGBM's probability (the ``lgbm_svc`` kind)."""
        return self.scores["lgbm"]

    @property
    def lgbm_flag(self) -> np.ndarray:
        """LightGBM passed its threshold (the ``lgbm_svc`` kind)."""
        return self.flags["lgbm"]

    @property
    def svc_score(self) -> np.ndarray:
        """The LinearSVC margin (the ``lgbm_svc`` kind)."""
        return self.scores["svc"]

    @property
    def svc_flag(self) -> np.ndarray:
        """The LinearSVC passed its threshold (the ``lgbm_svc`` kind)."""
        return self.flags["svc"]


class LoadedScreen(Protocol):
    """What every kind's loaded model offers the filter."""

    @property
    def version(self) -> str:
        """``NAME@SHA12`` of the artifact."""
        ...

    @property
    def outputs(self) -> ScreenOutputs:
        """Names of its scores and flags."""
        ...

    def predict(self, texts: Sequence[str], langs: Sequence[str] | None = None) -> ScreenResult:
        """Scores and flags, one value per text."""
        ...


Loader = Callable[[Path, dict[str, Any]], LoadedScreen]
"""``loader(folder, card)``: the card is already read and is a JSON object."""
_KINDS: dict[str, Loader] = {}


def register_kind(name: str) -> Callable[[Loader], Loader]:
    """Decorator registering ``loader`` for cards whose ``kind`` is ``name``; a second registration
    of the same name with another loader raises ``ValueError`` (two modules claiming one kind)."""

    def deco(loader: Loader) -> Loader:
        if _KINDS.get(name, loader) is not loader:
            raise ValueError(f"screen kind {name!r} is already registered")
        _KINDS[name] = loader
        return loader

    return deco


def registered_kinds() -> list[str]:
    """Names of the kinds registered in this process (sorted)."""
    return sorted(_KINDS)


def kind_loader(name: str) -> Loader:
    """The loader of kind ``name``: registered in-process (``spcl.screen.model`` registers the
    shipped kind; it is imported here on first use), else from an installed ``spcl.screen_kinds``
    entry point; :class:`ScreenModelError` when neither has it."""
    if name == DEFAULT_KIND and name not in _KINDS:
        # registers the shipped kind (heavy: imported on first use)
        from spcl.screen import model  # noqa: F401
    if name not in _KINDS:
        for ep in entry_points(group=ENTRY_POINT_GROUP, name=name):
            register_kind(name)(ep.load())
            break
    if name not in _KINDS:
        raise ScreenModelError(
            f"unknown screen model kind {name!r} (registered: {', '.join(registered_kinds())})"
        )
    return _KINDS[name]


def read_card(root: Path) -> dict[str, Any]:
    """The model card of artifact folder ``root`` as a JSON object; :class:`ScreenModelError` naming
    the file when the folder or card is missing or unreadable."""
    return artifacts.read_card(root, ScreenModelError, what="screen model")


def load_any(path: str | Path) -> LoadedScreen:
    """Load the screen artifact at ``path`` with the loader of the kind its card names."""
    root = Path(path)
    card = read_card(root)
    kind = card.get("kind", DEFAULT_KIND)
    if not isinstance(kind, str):
        raise ScreenModelError(f"{root / CARD}: 'kind' is not a string")
    return kind_loader(kind)(root, card)
