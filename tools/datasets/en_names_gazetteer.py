"""Build ``models/names-crf/en.gazetteer.json``: Latin-script given names and surnames of many
cultures.

The English name CRF (``spcl.extract.names.en_crf``) reads whether a word is a known given name or
surname as a feature, so that names outside an English given-name list (Priya Raman, Aisha Mensah,
Wei Zhang, Oluwaseun Adeyemi) are found in ordinary prose. The lists come from the person providers
of Faker (MIT licence), every locale whose names are written in Latin letters, plus the romanized
Chinese and Japanese names it ships; the file is built once and shipped beside the model, so that
finding names never needs Faker installed.

    python -m tools.datasets.en_names_gazetteer --output models/names-crf/en.gazetteer.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import re
from pathlib import Path

_LATIN_NAME = re.compile(
    r"^[A-Z\u00c0-\u00de][a-z\u00df-\u024f]+(?:['\u2019-][A-Za-z\u00c0-\u024f]+)?$"
)
_GIVEN = (
    "first_names",
    "first_names_male",
    "first_names_female",
    "first_names_nonbinary",
    "first_romanized_names",
)
_SURNAME = ("last_names", "last_names_male", "last_names_female", "last_romanized_names")


def _names(values: object) -> set[str]:
    if isinstance(values, dict):
        values = list(values)
    if not isinstance(values, (list, tuple, set, frozenset)):
        return set()
    return {v for v in values if isinstance(v, str) and _LATIN_NAME.match(v)}


def build() -> dict[str, object]:
    """The gazetteer: ``{"source", "licence", "locales", "given": [...], "surname": [...]}``
    (sorted)."""
    import faker
    import faker.providers.person as person

    given: set[str] = set()
    surname: set[str] = set()
    locales = []
    for info in sorted(pkgutil.iter_modules(person.__path__), key=lambda m: m.name):
        provider = importlib.import_module(f"faker.providers.person.{info.name}").Provider
        g = set().union(*(_names(getattr(provider, a, ())) for a in _GIVEN))
        s = set().union(*(_names(getattr(provider, a, ())) for a in _SURNAME))
        if g or s:
            locales.append(info.name)
        given |= g
        surname |= s
    return {
        "source": f"Faker {faker.VERSION} person providers (Latin-script names, romanized zh/ja)",
        "licence": "MIT",
        "locales": locales,
        "given": sorted(given),
        "surname": sorted(surname),
    }


def main() -> None:
    """Write the gazetteer JSON to ``--output``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--output", "-o", dest="out", default="models/names-crf/en.gazetteer.json")
    args = p.parse_args()
    table = build()
    Path(args.out).write_text(
        json.dumps(table, ensure_ascii=False, indent=0) + "\n", encoding="utf-8"
    )
    print(
        f"{len(table['given'])} given names, "  # type: ignore[arg-type]
        f"{len(table['surname'])} surnames"  # type: ignore[arg-type]
    )


if __name__ == "__main__":
    main()
