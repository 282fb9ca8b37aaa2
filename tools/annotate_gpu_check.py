"""GPU check of ``spcl annotate`` for when a GPU machine is lent: two local teacher models, in
process.

    python tools/annotate_gpu_check.py --output /tmp/annotate-gpu   # two tiny random models
    python tools/annotate_gpu_check.py --output /tmp/ag --model /models/a --model /models/b \\
        --backend vllm

Writes ``--docs`` documents as four Parquet files (``--data FILE.jsonl`` with ``id, text, lang``,
e.g. ``scpi-real-v1``, or else the seeded synthetic ja/ko/en screen corpus), runs the annotate job
with the two models as teachers (``transformers`` by default, on CUDA when present; ``--backend
vllm`` where vLLM is installed), and prints one JSON summary (also ``OUT/annotate_gpu_check.json``):
device, documents, wall seconds, documents/s, generated tokens/s per teacher, counts, rejection
reasons, parse-failure rates and kappa. Without ``--model`` it writes two random-weight tiny Llama
chat models (different seeds): they print noise or nothing, so every text is rejected
(``unparseable``/``backend_error``) — that run measures serving plumbing and throughput, not label
quality. Only real instruct models give meaningful kappa, parse-failure rates and label counts. No
network is needed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def write_docs(folder: Path, n_docs: int, data: str | None, seed: int = 0, n_files: int = 4) -> int:
    """Write ``n_docs`` documents (cycled with new ids when the source is smaller) as Parquet
    files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if data:
        pool = [
            json.loads(line)
            for line in Path(data).read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
    else:
        from spcl.synth.screen_data import generate

        pool = generate(max(1, n_docs // 12), seed=seed)
    docs = [
        {
            "id": f"gpu-{i:06d}",
            "text": pool[i % len(pool)]["text"],
            "lang": pool[i % len(pool)].get("lang"),
        }
        for i in range(n_docs)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(n_files):
        part = docs[k::n_files]
        pq.write_table(
            pa.table({c: [d[c] for d in part] for c in ("id", "text", "lang")}),
            folder / f"part-{k:05d}.parquet",
        )
    return len(docs)


def main(argv: list[str] | None = None) -> int:
    """Run the check; exit 0 when the job ran and every record reached one output, 1 otherwise."""
    parser = argparse.ArgumentParser(
        prog="annotate_gpu_check",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--output",
        "-o",
        dest="out",
        required=True,
        help="work folder (must not hold an earlier run)",
    )
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument(
        "--data", default=None, help="JSONL with id, text, lang (default: synthetic corpus)"
    )
    parser.add_argument(
        "--model",
        action="append",
        default=None,
        help="a local teacher model folder; give two (default: two random tiny models)",
    )
    parser.add_argument("--backend", choices=("transformers", "vllm"), default="transformers")
    parser.add_argument("--hidden", type=int, default=256, help="random model width (head size 64)")
    parser.add_argument("--layers", type=int, default=4, help="random model depth")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="auto", help="transformers: cuda, cpu or auto")
    args = parser.parse_args(argv)

    from spcl.annotate.job import AnnotateConfig, run_annotate
    from spcl.annotate.teachers import TeacherSpec

    out = Path(args.out)
    models = args.model
    if not models:
        from spcl.bench.tiny_model import write_tiny_model

        models = [
            str(
                write_tiny_model(
                    out / f"tiny-{s}",
                    seed=s,
                    hidden_size=args.hidden,
                    layers=args.layers,
                    heads=max(1, args.hidden // 64),
                )
            )
            for s in (1, 2)
        ]
    if len(models) < 2:
        parser.error("give --model twice (two teachers)")
    n = write_docs(out / "input", args.docs, args.data)
    teachers = [TeacherSpec(f"teacher-{i + 1}", args.backend, m) for i, m in enumerate(models)]
    cfg = AnnotateConfig(
        input=str(out / "input"),
        output=str(out / "annotated"),
        teachers=teachers,
        candidates="all",
        batch_size=args.batch_size,
        options={
            "max_tokens": args.max_tokens,
            "device": args.device,
            "batch_size": args.batch_size,
        },
    )
    device = "cpu"
    try:
        import torch

        device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    except ImportError:
        pass
    t0 = time.perf_counter()
    report = run_annotate(cfg)
    wall = time.perf_counter() - t0
    stats = report["teacher_stats"]
    summary = {
        "device": device,
        "backend": args.backend,
        "models": models,
        "documents": n,
        "wall_seconds_with_model_load": round(wall, 2),
        "documents_per_second": round(n / wall, 2),
        "generated_tokens_per_second": {
            t: round(
                s["generated_tokens"] / max(1e-9, s["seconds_per_document"] * s["documents"]), 1
            )
            for t, s in stats.items()
        },
        "counts": report["counts"],
        "rejected_reasons": report["rejected_reasons"],
        "parse_failure_rate": {t: s["parse_failure_rate"] for t, s in stats.items()},
        "backend_errors": {t: s["backend_errors"] for t, s in stats.items()},
        "label_kappa": {p: v["label_kappa"] for p, v in report["kappa"].items()},
        "reconciliation_ok": report["reconciliation"]["ok"],
    }
    (out / "annotate_gpu_check.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0 if summary["reconciliation_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
