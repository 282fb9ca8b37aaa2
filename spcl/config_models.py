"""The base models of spcl's one configuration system and the one way a job's configuration is
assembled.

Every configuration is a pydantic model: the sections of ``conf/*.yaml`` (:mod:`spcl.config`), the
file jobs' configs (:class:`JobConfig`, registered in :mod:`spcl.job_configs`) and the trainers'
settings written into model cards (:class:`TrainerSettings`). A bad key or value raises
:class:`ConfigError`, whose message names the key, never the value; :func:`job_config` merges
defaults, a YAML section and the CLI flags.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any, ClassVar, Self, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from spcl.errors import InvalidConfig


class ConfigError(InvalidConfig, ValueError):
    """A configuration file is missing, unreadable or invalid; the message names the key."""

    def __init__(self, message: str, keys: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.keys = keys
        """``(key, problem)`` of each bad key when the error comes from validating a model (else
        empty)."""


def _bad_keys(err: ValidationError) -> list[tuple[str, str]]:
    """``(dotted key, problem)`` per error; a nested model's own :class:`ConfigError` (a model whose
    ``__init__`` validates, met as a field's value) is unfolded into its keys under the field's."""
    out: list[tuple[str, str]] = []
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"])
        inner = (e.get("ctx") or {}).get("error")
        if isinstance(inner, ConfigError) and inner.keys:
            out += [(f"{key}.{k}" if key else k, problem) for k, problem in inner.keys]
        else:
            out.append(
                (key or "<root>", "unknown key" if e["type"] == "extra_forbidden" else e["msg"])
            )
    return out


def config_error(err: ValidationError, origin: str) -> ConfigError:
    """The :class:`ConfigError` of a failed validation: ``origin``, then one line per bad key
    (never its value)."""
    keys = _bad_keys(err)
    lines = "\n".join(f"  {key}: {problem}" for key, problem in keys)
    return ConfigError(f"invalid configuration in {origin}:\n{lines}", tuple(keys))


class TrainerSettings(BaseModel):
    """Base of a trainer's settings (``spcl train``, ``spcl train-extractor``), written into the
    model card of what it trains: frozen, no unknown key; a bad key or value raises
    :class:`ConfigError` naming the key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as err:
            raise config_error(err, f"the {type(self).__name__}") from None

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` applied, validated like a new instance (what
        ``dataclasses.replace`` did)."""
        return type(self)(
            **({name: getattr(self, name) for name in type(self).model_fields} | changes)
        )


class JobConfig(BaseModel):
    """Base of every job's configuration (``spcl mask``, ``spcl generalize``, ``spcl annotate``).

    A pydantic model like the YAML sections: an unknown key or a bad value raises
    :class:`ConfigError` naming the key (never the value). The fields named in ``positional`` may
    also be given by position (``MaskJobConfig("in", "out", "vault")``). Jobs may set ``run_id`` and
    paths after construction.
    """

    model_config = ConfigDict(extra="forbid")
    positional: ClassVar[tuple[str, ...]] = ()
    deprecated_keys: ClassVar[dict[str, str]] = {}
    """Old spelling -> the key that replaced it; the old one is accepted with a
    :class:`DeprecationWarning`."""

    def __init__(self, *args: Any, **data: Any) -> None:
        cls = type(self)
        if len(args) > len(cls.positional):
            raise TypeError(
                f"{cls.__name__} takes at most {len(cls.positional)} positional arguments"
            )
        for name, value in zip(cls.positional, args, strict=False):
            if name in data:
                raise TypeError(f"{cls.__name__} got {name!r} twice")
            data[name] = value
        try:
            super().__init__(**_renamed(cls, data))
        except ValidationError as err:
            raise config_error(err, f"the {cls.__name__}") from None

    def to_json(self) -> str:
        """The config as JSON (for Spark workers)."""
        return json.dumps(self.model_dump(mode="json"))

    @classmethod
    def from_json(cls, text: str) -> Any:
        """The config back from :meth:`to_json`."""
        return cls(**json.loads(text))


def _renamed(cls: type[JobConfig], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with deprecated keys renamed to their current spelling (a warning names both
    keys)."""
    for old, new in cls.deprecated_keys.items():
        if old in data:
            if new in data:
                raise ConfigError(
                    f"invalid configuration in the {cls.__name__}:\n  {old}: give {new} only "
                    f"({old} is its deprecated spelling)"
                )
            warnings.warn(
                f"{cls.__name__}: {old!r} is deprecated; use {new!r}",
                DeprecationWarning,
                stacklevel=4,
            )
            data[new] = data.pop(old)
    return data


J = TypeVar("J", bound=BaseModel)


def job_config(
    model: type[J],
    *,
    yaml_section: BaseModel | Mapping[str, Any] | None = None,
    cli: Mapping[str, Any] | None = None,
) -> J:
    """The one way a job's configuration is assembled: the model's defaults, then the config file's
    section (``yaml_section``: keys the model has), then the CLI flags that were given (``cli``: a
    value of ``None`` means "not given" and keeps what is below it). Raises :class:`ConfigError`
    naming a bad key.

    >>> from spcl.config import GeneralizeSettings
    >>> section, cli = {"guesses": 3}, {"guesses": None, "seed": 7}
    >>> job_config(GeneralizeSettings, yaml_section=section, cli=cli).seed
    7
    """
    base = (
        yaml_section.model_dump()
        if isinstance(yaml_section, BaseModel)
        else dict(yaml_section or {})
    )
    merged = base | {k: v for k, v in (cli or {}).items() if v is not None}
    if issubclass(model, JobConfig):
        return model(**merged)
    try:
        return model.model_validate(merged)
    except ValidationError as err:
        raise config_error(err, f"the {model.__name__}") from None
