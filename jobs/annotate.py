"""spark-submit entry point of the annotate job (the same code as ``spcl annotate``, one task per
input file).

    spark-submit jobs/annotate.py --input /shared/sample --output /shared/annotated \\
        --teacher vllm:/models/swallow-8b --teacher vllm:/models/gemma-2-9b --positive-share 0.10

Executors build their teacher clients once per Python worker (in-process vLLM engines on GPU
executors, or HTTP clients of OpenAI-compatible servers); the driver merges the parts and writes the
report. Input and output paths must be on a filesystem every executor sees.
"""

from __future__ import annotations

import argparse
import sys

from spcl.cli import main as cli_main
from spcl.commands.annotate import add_annotate_arguments


def main(argv: list[str] | None = None) -> int:
    """Parse the job's arguments and run ``spcl annotate`` with the Spark engine."""
    args = list(argv if argv is not None else sys.argv[1:])
    parser = argparse.ArgumentParser(prog="jobs/annotate.py", description=__doc__)
    add_annotate_arguments(parser)
    parser.parse_args(args)  # validate early, with this script's usage text
    if "--engine" not in args:
        args += ["--engine", "spark"]
    # the master comes from spark-submit unless --master is given
    return cli_main(["annotate", "--submitted", *args])


if __name__ == "__main__":
    sys.exit(main())
