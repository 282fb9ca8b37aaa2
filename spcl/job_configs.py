"""The registry of job configurations: one pydantic model per job, the single schema of every
setting.

``spcl filter`` reads the whole YAML file (:class:`spcl.config.Settings`); the file jobs are
:class:`spcl.config_models.JobConfig` models, built by :func:`spcl.config_models.job_config`
(defaults ← the YAML sections they read ← CLI flags). The configuration reference page (``python -m
tools.gen_docs``) is generated from this registry, and
``tests/architecture/test_one_config_system.py`` keeps every job's config in it.
"""

from __future__ import annotations

from pydantic import BaseModel

from spcl.annotate.config import AnnotateConfig
from spcl.config import Settings
from spcl.generalize.config import GeneralizeJobConfig
from spcl.mask_stage.config import MaskJobConfig

__all__ = ["JOB_CONFIGS", "YAML_SECTIONS"]

JOB_CONFIGS: dict[str, type[BaseModel]] = {
    "filter": Settings,
    "mask": MaskJobConfig,
    "generalize": GeneralizeJobConfig,
    "annotate": AnnotateConfig,
}
"""Job name -> its configuration model."""

YAML_SECTIONS: dict[str, tuple[str, ...]] = {
    "filter": ("input", "detect", "policy", "screen", "spark", "output"),
    "mask": ("mask", "tier"),
    "generalize": ("generalize",),
    "annotate": (),
}
"""Job name -> the sections of the YAML file (``--conf``) it reads; its other settings come from
flags."""
