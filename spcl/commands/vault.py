"""``spcl vault``: keys for the encrypted mapping vault.

spcl vault keygen --output ~/.config/spcl/vault.key (mode 0600; then export SPCL_VAULT_KEY_FILE=...)

Keys are never read from the command line: set ``SPCL_VAULT_KEY`` or ``SPCL_VAULT_KEY_FILE``.
"""

from __future__ import annotations

import argparse

from spcl.errors import RunFailed
from spcl.mask.vault import KEY_FILE_ENV, VaultError, write_key_file


def _keygen(args: argparse.Namespace) -> int:
    try:
        path = write_key_file(args.out)
    except (VaultError, OSError) as err:
        raise RunFailed(str(err)) from err
    print(f"wrote a new vault key to {path} (mode 0600); use it with {KEY_FILE_ENV}={path}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl vault keygen``."""
    parser = sub.add_parser(
        "vault",
        help="manage keys of the encrypted mapping vault",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    vsub = parser.add_subparsers(dest="vault_command", required=True, metavar="ACTION")
    p = vsub.add_parser(
        "keygen", help="write a new random 256-bit key file (mode 0600, never overwrites)"
    )
    p.add_argument("--output", "-o", dest="out", required=True, metavar="FILE")
    p.set_defaults(func=_keygen)
