"""The shipped screen kind's own training options on the command line (``spcl train``,
``jobs/train.py``).

The train command adds these with :func:`add_kind_arguments`, passes :func:`kind_settings` to
:class:`spcl.screen.train.TrainSettings` and repeats them with :func:`kind_command_parts`, so the
command never names a head. Only the standard library is imported here: building the CLI's parser
must not load LightGBM.
"""

from __future__ import annotations

import argparse
from typing import Any

TRAIN_HELP = "train the screen model (TF-IDF → LightGBM ∪ LinearSVC)"
"""The ``spcl train`` one-line help."""
THREADS_HELP = "LightGBM training threads (default 1)"
"""Help of ``--threads``."""
OOF_HELP = (
    "also write the out-of-fold scores of the real training records (id, lang, source, label, fold,"
    " lgbm, svc; no text) that chose the thresholds"
)
"""Help of ``--oof-out``: the columns of each line (one score per head)."""


def add_kind_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options that only the LightGBM ∪ LinearSVC kind reads (``--lang-svc-only``,
    ``--svc-nb-alpha``)."""
    parser.add_argument(
        "--lang-svc-only",
        default="",
        metavar="en",
        help="languages flagged by the LinearSVC alone (their LightGBM never flags)",
    )
    parser.add_argument(
        "--svc-nb-alpha",
        type=float,
        default=0.0,
        metavar="ALPHA",
        help=(
            "NB-SVM: train the LinearSVC on columns scaled by their log-count ratio with this "
            "smoothing (default 0: plain TF-IDF; the default model uses 1)"
        ),
    )


def kind_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`~spcl.screen.train.TrainSettings` fields set by :func:`add_kind_arguments`'s
    options.

    >>> kind_settings(argparse.Namespace(lang_svc_only="en, ko", svc_nb_alpha=1.0))
    {'lang_svc_only': ('en', 'ko'), 'svc_nb_alpha': 1.0}
    """
    langs = tuple(
        x.strip() for x in str(getattr(args, "lang_svc_only", "")).split(",") if x.strip()
    )
    return {"lang_svc_only": langs, "svc_nb_alpha": float(getattr(args, "svc_nb_alpha", 0.0))}


def kind_command_parts(args: argparse.Namespace) -> list[str]:
    """The command-line words that repeat the options of :func:`add_kind_arguments` that differ from
    the defaults (for the command line a model card records).

    >>> kind_command_parts(argparse.Namespace(lang_svc_only="en", svc_nb_alpha=0.0))
    ['--lang-svc-only', 'en']
    """
    parts: list[str] = []
    if getattr(args, "lang_svc_only", ""):
        parts += ["--lang-svc-only", args.lang_svc_only]
    if getattr(args, "svc_nb_alpha", 0.0):
        parts += ["--svc-nb-alpha", str(args.svc_nb_alpha)]
    return parts
