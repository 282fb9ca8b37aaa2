"""spark-submit entry point of the filter job (the same code as ``spcl filter``).

On a cluster (options as for ``spcl filter``)::

    spark-submit jobs/filter.py --input s3a://bucket/crawl/ --output s3a://bucket/out/ \\
        --conf conf/cluster.yaml
"""

from __future__ import annotations

import argparse
import sys

from spcl.cli import main as cli_main
from spcl.commands.filter import add_filter_arguments


def main(argv: list[str] | None = None) -> int:
    """Parse the job's arguments and run ``spcl filter`` with the Spark engine."""
    parser = argparse.ArgumentParser(prog="jobs/filter.py", description=__doc__)
    add_filter_arguments(parser)
    parser.parse_args(argv)  # validate early, with this script's usage text
    # the master comes from spark-submit unless --master is given
    return cli_main(["filter", "--submitted", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    sys.exit(main())
