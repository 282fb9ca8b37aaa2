"""spark-submit entry point of screen training (the same code as ``spcl train``).

    spark-submit jobs/train.py --data labelled.jsonl --output models/NAME \\
        [--seed 0] [--synthetic 300]

Training data for the screen is small (thousands of labelled documents), so the driver trains in
plain Python; Spark is the launcher that ships the code and the environment to a cluster node.
"""

from __future__ import annotations

import argparse
import sys

from spcl.cli import main as cli_main
from spcl.commands.train import add_train_arguments


def main(argv: list[str] | None = None) -> int:
    """Parse the job's arguments and run ``spcl train``."""
    parser = argparse.ArgumentParser(prog="jobs/train.py", description=__doc__)
    add_train_arguments(parser)
    parser.parse_args(argv)  # validate early, with this script's usage text
    return cli_main(["train", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    sys.exit(main())
