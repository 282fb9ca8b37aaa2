"""The rule-detector types, one registration each: adding a type is one :class:`RuleType` row here (plus its
detector module and its line in ``conf/default.yaml``).

Every table that used to be kept by hand is derived from :data:`RULE_TYPES`:
``spcl.config.PII_TYPES`` and the per-type fields of ``PolicySettings``, ``spcl.detect.DETECTORS`` (the
detector class, imported by name), ``spcl.detect.TYPE_PRIORITY`` and the numeric-cluster set (a detector with
``find_in`` is numeric), and ``spcl.entity_types.RULE_HIT_TYPES`` (the entity type the masker uses). This
module imports nothing from spcl, so the configuration can read it without importing the detectors.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RuleType:
    """One rule-detector type.

    ``entity``: the entity type the mask stage tokenizes it as (``spcl.entity_types.DEFAULT_TYPES``);
    ``detector``: ``"module:Class"`` of its detector; ``rank``: the last tie-breaker between overlapping hits
    (lower wins).
    """

    name: str
    entity: str
    detector: str
    rank: int


RULE_TYPES: tuple[RuleType, ...] = (
    RuleType("PHONE", "PHONE", "spcl.detect.phone:PhoneDetector", 8),
    RuleType("EMAIL", "EMAIL", "spcl.detect.mail:EmailDetector", 7),
    RuleType("RRN", "RRN", "spcl.detect.ids:RrnDetector", 0),
    RuleType("MYNUMBER", "RRN", "spcl.detect.ids:MyNumberDetector", 1),
    RuleType("CARD", "CARD", "spcl.detect.ids:CardDetector", 4),
    RuleType("ACCOUNT", "ACCOUNT", "spcl.detect.account:AccountDetector", 11),
    RuleType("DOB", "DOB", "spcl.detect.dob:DobDetector", 13),
    RuleType("POSTAL", "ADDRESS", "spcl.detect.location:PostalDetector", 14),
    RuleType("ADDRESS", "ADDRESS", "spcl.detect.location:AddressDetector", 15),
    # issue 25
    RuleType("SSN", "RRN", "spcl.detect.us:SsnDetector", 2),
    RuleType("ITIN", "RRN", "spcl.detect.us:ItinDetector", 3),
    RuleType("IBAN", "ACCOUNT", "spcl.detect.iban:IbanDetector", 5),
    RuleType("IP", "IP", "spcl.detect.network:IpDetector", 12),
    RuleType("CREDENTIAL", "CREDENTIAL", "spcl.detect.credentials:CredentialDetector", 6),
    RuleType("PASSPORT", "ID", "spcl.detect.documents:PassportDetector", 9),
    RuleType("DRIVER_LICENSE", "ID", "spcl.detect.documents:DriverLicenseDetector", 10),
)
"""Every rule-detector type, in the order the detectors run and the configuration lists them."""

PII_TYPES: tuple[str, ...] = tuple(t.name for t in RULE_TYPES)
"""Types the rule detectors can report (``spcl.detect``)."""
