"""Are two runs' outputs the same, apart from timings and run ids? For refactors that must not
change outputs.

    python tools/same_outputs.py run --code DIR --output OUT [--flagged DIR] [--spark-all]
    python tools/same_outputs.py compare OUT_A OUT_B

``run`` runs the checkout at ``--code`` (its ``spcl``, with this interpreter) on the demo sample:
``spcl filter`` with both engines, ``spcl mask --backend rules`` with both engines, ``spcl
generalize --backend rules`` and ``spcl annotate`` with the test suite's two scripted teachers
(``tests/annotate/test_job.py``, real HTTP on loopback) — with ``--spark-all`` generalize and
annotate on Spark too. ``--flagged`` takes the mask and generalize input from another run's
``filter-python/decision=flagged`` (compare job code across screen models), and the vault key is
``OUT/../vault.key`` (made once), so runs in sibling folders share it.

``compare`` lists every file that is only in one folder or differs, after dropping what changes by
itself: JSON keys naming timings, run ids, hosts and endpoints (``VOLATILE``), run ids inside names
and values, the SHA-256 and size a manifest gives of such files (their content is compared itself),
and the ciphertext of vault files (random nonces; their record ids are compared). Parquet files are
compared row by row.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{8}(-[0-9a-f]{4})?")
"""A run id (``20261202T060405Z-7320dda3``, with a writer's suffix ``-b98a``)."""
VOLATILE = (
    "endpoint",
    "parts_hash",
    "seconds",
    "elapsed",
    "run_id",
    "started",
    "finished",
    "per_second",
    "timings",
    "timestamp",
    "created",
    "wall",
    "startup",
    "latenc",
    "host",
    "pid",
    "date",
    "time",
)
"""JSON keys (substrings, lower case) whose values change from run to run; ``parts_hash`` hashes
the endpoints."""
ANNOTATE_VOLATILE = (*VOLATILE, "release_hash")
"""In annotate's outputs (``ann-*``) the release hash changes too: it covers the teachers'
endpoints, which the fixture serves on random ports."""


def scrub(value: Any, roots: tuple[str, ...] = (), volatile: tuple[str, ...] = VOLATILE) -> Any:
    """``value`` without volatile keys, run ids replaced, 64-hex digests blanked, and a path under
    one of ``roots`` (a run's output folder, its checkout) made relative to ``<root>``.

    >>> scrub({"run_id": "x", "n": 3, "file": "m-20261202T060405Z-7320dda3-b98a.jsonl",
    ...        "elapsed_seconds": 1.5})
    {'n': 3, 'file': 'm-<run>.jsonl'}
    >>> scrub(["/tmp/a/in/x.parquet"], ("/tmp/a",))
    ['<root>/in/x.parquet']
    """
    if isinstance(value, dict):
        return {
            RUN_ID.sub("<run>", k): scrub(v, roots, volatile)
            for k, v in value.items()
            if not any(w in k.lower() for w in volatile)
        }
    if isinstance(value, list):
        return [scrub(v, roots, volatile) for v in value]
    if isinstance(value, str):
        for root in roots:
            if value.startswith(root.rstrip("/") + "/"):
                value = "<root>" + value[len(root.rstrip("/")) :]
    if isinstance(value, str) and RUN_ID.search(value):
        return RUN_ID.sub("<run>", value)
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return "<sha256>"
    return value


def _hash(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def digests(path: Path, roots: tuple[str, ...] = ()) -> tuple[str, str]:
    """``(raw, normalized)`` digests of one output file (paths under ``roots`` relative, see
    :func:`scrub`)."""
    data = path.read_bytes()
    raw = hashlib.sha256(data).hexdigest()
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return raw, _hash(scrub(pq.read_table(path).to_pylist(), roots))
    # encrypted with random nonces: ids only
    if path.suffix == ".jsonl" and "vault" in path.as_posix():
        return raw, _hash(
            sorted(json.loads(line).get("id", "") for line in data.decode().splitlines() if line)
        )
    if path.suffix == ".json":
        try:
            doc = json.loads(data)
        except ValueError:
            return raw, raw
        if path.name == "manifest.json" and isinstance(doc.get("files"), dict):
            for entry in doc["files"].values():
                if isinstance(entry, dict):
                    entry.pop("bytes", None)  # sizes of files with timings in them
        annotate = any(part.startswith("ann-") for part in path.parts)
        return raw, _hash(scrub(doc, roots, ANNOTATE_VOLATILE if annotate else VOLATILE))
    return raw, raw


def compare(
    a: Path, b: Path, roots_a: tuple[str, ...] = (), roots_b: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``{"identical": n, "normalized": n, "differ": [...], "only_a": [...], "only_b": [...]}`` over
    every file under ``a`` and ``b`` (names with run ids replaced; paths under ``a`` or ``roots_a``,
    ``b`` or ``roots_b`` compared relative to them)."""
    # the inputs both runs read come from this tool's checkout
    ra = (str(a.resolve()), *roots_a, str(ROOT))
    rb = (str(b.resolve()), *roots_b, str(ROOT))
    fa = {RUN_ID.sub("<run>", p.relative_to(a).as_posix()): p for p in a.rglob("*") if p.is_file()}
    fb = {RUN_ID.sub("<run>", p.relative_to(b).as_posix()): p for p in b.rglob("*") if p.is_file()}
    result: dict[str, Any] = {
        "identical": 0,
        "normalized": 0,
        "differ": [],
        "only_a": sorted(set(fa) - set(fb)),
        "only_b": sorted(set(fb) - set(fa)),
    }
    for rel in sorted(set(fa) & set(fb)):
        (raw_a, norm_a), (raw_b, norm_b) = digests(fa[rel], ra), digests(fb[rel], rb)
        if raw_a == raw_b:
            result["identical"] += 1
        elif norm_a == norm_b:
            result["normalized"] += 1
        else:
            result["differ"].append(rel)
    return result


def _spcl(code: Path, args: list[str], env: dict[str, str]) -> None:
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-m", "spcl.cli", *args],
        cwd=code,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(code), **env},
    )
    target = next((args[i + 1] for i, a in enumerate(args) if a in ("--output", "-o", "--out")), "")
    print(f"rc={done.returncode} {time.time() - started:.0f}s spcl {args[0]} -> {target}")
    if done.returncode not in (0, 3):
        print(done.stderr[-3000:], file=sys.stderr)


def run(code: Path, out: Path, flagged: Path | None, spark_all: bool) -> None:
    """Run every job of the checkout at ``code`` into ``out`` (see the module's docs)."""
    out.mkdir(parents=True, exist_ok=True)
    key = out.parent / "vault.key"
    if not key.exists():
        # "--out": what checkouts before the --output rename take, and an unambiguous prefix of
        # --output
        subprocess.run(
            [sys.executable, "-m", "spcl.cli", "vault", "keygen", "--out", str(key)],
            cwd=code,
            env={**os.environ, "PYTHONPATH": str(code)},
            check=True,
        )
    env = {"SPCL_VAULT_KEY_FILE": str(key)}
    if flagged is None:
        for engine in ("python", "spark"):
            _spcl(
                code,
                [
                    "filter",
                    "--input",
                    str(ROOT / "data" / "sample"),
                    "--output",
                    str(out / f"filter-{engine}"),
                    "--engine",
                    engine,
                ],
                env,
            )
        flagged = out / "filter-python" / "decision=flagged"
    for engine in ("python", "spark"):
        _spcl(
            code,
            [
                "mask",
                "--input",
                str(flagged),
                "--output",
                str(out / f"mask-{engine}"),
                "--vault",
                str(out / f"vault-{engine}"),
                "--backend",
                "rules",
                "--engine",
                engine,
            ],
            env,
        )
    for engine in ("python", "spark") if spark_all else ("python",):
        _spcl(
            code,
            [
                "generalize",
                "--input",
                str(flagged),
                "--output",
                str(out / f"gen-{engine}"),
                "--vault",
                str(out / f"gen-vault-{engine}"),
                "--backend",
                "rules",
                "--engine",
                engine,
            ],
            env,
        )
    sys.path.insert(0, str(ROOT))
    from tests.support.annotate_teachers import A, B, ScriptedTeachers, script, write_input

    inp = out.parent / "annotate-input"  # one path for every run: a malformed line's id hashes it
    if not inp.exists():
        write_input(inp)
    with ScriptedTeachers(script) as teachers:
        for engine in ("python", "spark") if spark_all else ("python",):
            _spcl(
                code,
                [
                    "annotate",
                    "--input",
                    str(inp),
                    "-o",
                    str(out / f"ann-{engine}"),
                    "--teacher",
                    teachers.spec(A),
                    "--teacher",
                    teachers.spec(B),
                    "--retries",
                    "0",
                    "--concurrency",
                    "1",
                    "--engine",
                    engine,
                ],
                env,
            )


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module's docs); ``compare`` exits 1 when something differs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--code", type=Path, default=ROOT)
    r.add_argument("--output", "-o", dest="out", type=Path, required=True)
    r.add_argument("--flagged", type=Path, default=None)
    r.add_argument("--spark-all", action="store_true")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    c.add_argument(
        "--code-a", default=None, help="the checkout run A used (its model paths compare relative)"
    )
    c.add_argument("--code-b", default=None, help="the checkout run B used")
    args = parser.parse_args(argv)
    if args.cmd == "run":
        run(args.code.resolve(), args.out.resolve(), args.flagged, args.spark_all)
        return 0
    result = compare(
        args.a, args.b, (args.code_a,) if args.code_a else (), (args.code_b,) if args.code_b else ()
    )
    for name in ("only_a", "only_b", "differ"):
        for rel in result[name]:
            print(f"{name}: {rel}")
    print(
        f"{result['identical']} files byte-identical, {result['normalized']} identical but for"
        f" timings and run ids, {len(result['differ'])} differ,"
        f" {len(result['only_a']) + len(result['only_b'])} in one only"
    )
    return 1 if result["differ"] or result["only_a"] or result["only_b"] else 0


if __name__ == "__main__":
    sys.exit(main())
