"""Rebuild the shipped models from the data in this repository and say whether they match the
shipped ones.

    python tools/rebuild_models.py                  # every model, into build/models/
                                                    # (`make models`)
    python tools/rebuild_models.py --only names-crf # one of them
    python tools/rebuild_models.py --list           # the training commands, without running them

Each model is retrained with the command below (the one its model card records), into
``build/models/NAME``, and every model file is compared with the shipped one: ``identical`` (same
SHA-256), ``equal within TOL`` (NumPy arrays whose values moved by less than ``TOL``, e.g. a BLAS of
another build), or ``DIFFERS``. Exit status: 0 every file matches, 1 a file differs or a training
command failed, 2 bad usage. The training commands live only here: change a recipe in ``COMMANDS``
and in the model's card together.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# name -> (shipped folder, steps run in order as `python -m MODULE ARGS` ({out}: the output folder),
# files to compare)
COMMANDS: dict[str, tuple[str, list[list[str]], list[str]]] = {
    "screen-default": (
        "models/screen-default",
        [
            [
                "spcl.cli",
                "train",
                "--data",
                "data/scpi-real-v1/labelled.jsonl",
                "--data",
                "data/scpi-real-v2/labelled.jsonl",
                "--data",
                "data/weak-none/libreoffice-help.jsonl",
                "--data",
                "data/weak-prose/prose.jsonl",
                "--data",
                "data/weak-technical/train.jsonl",
                "--output",
                "{out}",
                "--seed",
                "0",
                "--synthetic",
                "300",
                "--cv-folds",
                "0",
                "--target-recall",
                "0.94",
                "--weak-weight",
                "0.5",
                "--per-lang-thresholds",
                "ja,ko",
                "--global-threshold-langs",
                "ko",
                "--lang-target-recall",
                "ja=0.96,ko=0.97",
                "--fewest-none-langs",
                "ja",
                "--lang-svc-only",
                "en",
                "--mecab-dic",
                "chars",
            ]
        ],
        ["lexicon.json", "lgbm.txt", "screen.npz", "spm.model"],
    ),
    "names-crf": (
        "models/names-crf",
        [
            [
                "spcl.cli",
                "train-names",
                "--data",
                "data/names-gold-v1/names.jsonl",
                "--lang",
                "ja,ko",
                "--output",
                "{out}",
            ],
            ["tools.datasets.en_names_gazetteer", "--output", "{out}/en.gazetteer.json"],
            [
                "spcl.cli",
                "train-names",
                "--lang",
                "en",
                "--data",
                "data/names-gold-v2/names.jsonl",
                "--output",
                "{out}",
            ],
        ],
        ["ja.crfsuite", "ko.crfsuite", "ko.gazetteer.json", "en.crfsuite", "en.gazetteer.json"],
    ),
}
TOLERANCE = 1e-3


def _sha256(path: Path) -> str:
    """SHA-256 of a file, hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _npz_max_diff(a: Path, b: Path) -> float | None:
    """Largest absolute difference between two ``.npz`` files' arrays; None when their names or
    shapes differ."""
    import numpy as np

    with (
        np.load(io.BytesIO(a.read_bytes()), allow_pickle=False) as x,
        np.load(io.BytesIO(b.read_bytes()), allow_pickle=False) as y,
    ):
        if sorted(x.files) != sorted(y.files):
            return None
        worst = 0.0
        for key in x.files:
            u, v = x[key], y[key]
            if u.shape != v.shape or u.dtype.kind != v.dtype.kind:
                return None
            if u.dtype.kind in "fc":
                worst = max(worst, float(np.max(np.abs(u - v))) if u.size else 0.0)
            elif not np.array_equal(u, v):
                return None
        return worst


def compare(shipped: Path, rebuilt: Path, files: list[str]) -> list[tuple[str, str, bool]]:
    """(file, verdict, matches) for each model file of a rebuilt folder against the shipped one."""
    out = []
    for name in files:
        a, b = shipped / name, rebuilt / name
        if not b.is_file():
            out.append((name, "MISSING from the rebuilt model", False))
        elif _sha256(a) == _sha256(b):
            out.append((name, "identical", True))
        elif name.endswith(".npz") and zipfile.is_zipfile(a) and zipfile.is_zipfile(b):
            diff = _npz_max_diff(a, b)
            if diff is not None and diff < TOLERANCE:
                out.append(
                    (name, f"equal within {TOLERANCE:g} (largest difference {diff:.2g})", True)
                )
            else:
                out.append(
                    (
                        name,
                        "DIFFERS" + ("" if diff is None else f" (largest difference {diff:.2g})"),
                        False,
                    )
                )
        else:
            out.append((name, "DIFFERS", False))
    return out


def rebuild(name: str, out_root: Path) -> bool:
    """Retrain one model into ``out_root/name`` and print how its files compare; True when all
    match."""
    shipped, steps, files = COMMANDS[name]
    out = out_root / name
    start = time.monotonic()
    for step in steps:
        argv = [sys.executable, "-m", *(a.replace("{out}", str(out)) for a in step)]
        print(f"== {name}: python -m {' '.join(argv[2:])}", flush=True)
        done = subprocess.run(argv, cwd=ROOT, check=False)
        if done.returncode != 0:
            print(f"{name}: training failed (exit {done.returncode})", flush=True)
            return False
    print(f"{name}: trained in {time.monotonic() - start:.0f} s", flush=True)
    ok = True
    for file, verdict, match in compare(ROOT / shipped, out, files):
        print(f"  {file}: {verdict}")
        ok = ok and match
    print(
        f"{name}: {'matches the shipped model' if ok else 'does NOT match the shipped model'}",
        flush=True,
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    """Rebuild the chosen models; 0 when every rebuilt file matches the shipped one."""
    ap = argparse.ArgumentParser(prog="tools/rebuild_models.py", description=__doc__.split("\n")[0])
    ap.add_argument(
        "--only", action="append", choices=sorted(COMMANDS), help="this model only (repeatable)"
    )
    ap.add_argument(
        "--output",
        "-o",
        dest="out",
        default=str(ROOT / "build" / "models"),
        help="where the rebuilt models go",
    )
    ap.add_argument("--list", action="store_true", help="print the training commands and exit")
    args = ap.parse_args(argv)
    names = args.only or list(COMMANDS)
    if args.list:
        for name in names:
            for step in COMMANDS[name][1]:
                print(f"{name}: python -m {' '.join(step)}".replace("{out}", f"{args.out}/{name}"))
        return 0
    results = {name: rebuild(name, Path(args.out).resolve()) for name in names}
    print(
        "summary: "
        + ", ".join(f"{n} {'matches' if ok else 'DIFFERS'}" for n, ok in results.items())
    )
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
