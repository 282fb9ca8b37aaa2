"""spark-submit entry point of the mask job (the same code as ``spcl mask``, one Spark task per
input file).

    spark-submit --conf spark.executorEnv.SPCL_VAULT_KEY_FILE=/secrets/vault.key \\
        jobs/mask.py --input /shared/out/decision=flagged --output /shared/masked \\
        --vault /shared/vault \\
        --backend vllm --model /models/qwen3-8b --fallback rules

Executors build their extractor once per Python worker (one vLLM engine per GPU executor); input,
output and vault paths must be on a filesystem every executor sees.
"""

from __future__ import annotations

import argparse
import sys

from spcl.cli import main as cli_main
from spcl.commands.mask import add_mask_arguments


def main(argv: list[str] | None = None) -> int:
    """Parse the job's arguments and run ``spcl mask`` with the Spark engine."""
    args = list(argv if argv is not None else sys.argv[1:])
    parser = argparse.ArgumentParser(prog="jobs/mask.py", description=__doc__)
    add_mask_arguments(parser)
    parser.parse_args(args)  # validate early, with this script's usage text
    if "--engine" not in args:
        args += ["--engine", "spark"]
    # the master comes from spark-submit unless --master is given
    return cli_main(["mask", "--submitted", *args])


if __name__ == "__main__":
    sys.exit(main())
