"""spark-submit entry point of the generalize job (the same code as ``spcl generalize``, one task
per input file).

    spark-submit --conf spark.executorEnv.SPCL_VAULT_KEY_FILE=/secrets/vault.key \\
        jobs/generalize.py --input /shared/out/decision=flagged --output /shared/gen \\
        --vault /shared/vault \\
        --backend openai --endpoint http://gpu-node:8000/v1 --model NAME

Executors build their extractor and chat client once per Python worker; input, output and vault
paths must be on a filesystem every executor sees.
"""

from __future__ import annotations

import argparse
import sys

from spcl.cli import main as cli_main
from spcl.commands.generalize import add_generalize_arguments


def main(argv: list[str] | None = None) -> int:
    """Parse the job's arguments and run ``spcl generalize`` with the Spark engine."""
    args = list(argv if argv is not None else sys.argv[1:])
    parser = argparse.ArgumentParser(prog="jobs/generalize.py", description=__doc__)
    add_generalize_arguments(parser)
    parser.parse_args(args)  # validate early, with this script's usage text
    if "--engine" not in args:
        args += ["--engine", "spark"]
    # the master comes from spark-submit unless --master is given
    return cli_main(["generalize", "--submitted", *args])


if __name__ == "__main__":
    sys.exit(main())
