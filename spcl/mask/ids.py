"""Document ids are text too: an id that holds a value is never released in clear.

A crawl's ids are often URLs, and a URL can carry an address or a number
(``https://…/u?mail=<address>``). The mask and generalize jobs run the same rule detectors over
every id (its NFC form, and the form with URL escapes decoded, so ``kim%40mailbox.com`` counts as an
address) before a row is written. An id where they find anything is released as the vault's keyed
hash of it (:meth:`spcl.mask.vault.Vault.screened_id`, ``id-`` and 24 hex digits) in ``masked/``,
``generalized/`` and ``failed/``; a released row's vault record keeps the id itself, encrypted, so
``spcl unmask`` gives it back. Ids without a value are released as they are.

Nothing else depends on the id: row keys (resume, retries, the vault's record keys) are made from
the input's own ids before this step, and the masked text, its spans and its reassembly do not
involve the id.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote_plus

from spcl.detect import find_pii
from spcl.text import normalize


def id_holds_value(doc_id: str) -> bool:
    """Whether the rule detectors find a value in ``doc_id`` (as written, or with URL escapes
    decoded).

    >>> id_holds_value("https://example.org/u?mail=kim%40mailbox.com")
    True
    >>> id_holds_value("crawl-00017")
    False
    """

    nfc = normalize(doc_id)
    forms = {nfc}
    if "%" in nfc or "+" in nfc:
        forms.add(normalize(unquote_plus(nfc, errors="replace")))
    return any(find_pii(form) for form in forms)


def release_id(doc_id: str | None, vault: Any) -> str | None:
    """The id a row is released with: ``doc_id``, or ``vault.screened_id(doc_id)`` when it holds
    a value."""
    if doc_id is None:
        return None
    return vault.screened_id(doc_id) if id_holds_value(doc_id) else doc_id
