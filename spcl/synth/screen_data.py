"""Seeded synthetic augmentation corpus for the screen: SCPI / RELATED / NONE in ja, ko and en.

Sentences are assembled from templates and slot lists written for it, one module per language
(``spcl.synth.screen_templates_ja``, ``_ko``, ``_en``; no external data):

- **SCPI**: a specific person (full name, news-style partial name such as ``김모(41)씨`` / ``A씨`` /
  ``田中容疑者``, or first-person family: "my mother") plus a medical, crime, disability or
  creed/ethnicity/orientation fact;
- **RELATED**: the same topics without an identifiable individual (statistics, policy, a disease in
  general, unnamed groups, fictional characters in a plot summary, an investigated company);
- **NONE**, including hard negatives: named people doing neutral things (elections, transfers,
  albums, acting — ``연기`` also means smoke), accidents without injury, civil-only disputes,
  trains, products, movie reviews.

A record is ``{"id", "lang", "source": "synthetic-screen-v1", "text", "label", "categories"}``; the
same ``seed`` and sizes give the same records in the same order (``random.Random(seed)`` only).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from spcl.synth import screen_templates_en as en
from spcl.synth import screen_templates_ja as ja
from spcl.synth import screen_templates_ko as ko

SOURCE = "synthetic-screen-v1"

_TABLES: dict[str, tuple[Any, ...]] = {
    "ja": (ja.TOPICS, ja.SLOTS, ja.NONE_TEMPLATES, ja.person, ja.PLACES, ja.TEAMS, ja.DAILY),
    "ko": (ko.TOPICS, ko.SLOTS, ko.NONE_TEMPLATES, ko.person, ko.PLACES, ko.TEAMS, ko.DAILY),
    "en": (en.TOPICS, en.SLOTS, en.NONE_TEMPLATES, en.person, en.PLACES, en.TEAMS, en.DAILY),
}


def _fill(template: str, lang: str, rng: random.Random) -> str:
    _, slots, _, person, places, teams, _ = _TABLES[lang]
    values = {k: rng.choice(v) for k, v in slots.items()}
    values.update(
        p=person(rng),
        q=person(rng),
        year=rng.randint(1950, 2024),
        month=rng.randint(1, 12),
        month_en=rng.choice(en.MONTHS),
        n=rng.randint(2, 30),
        m=rng.randint(0, 9),
        place=rng.choice(places),
        team=rng.choice(teams),
    )
    return template.format(**values)


def _neutral(lang: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(_TABLES[lang][6])
    return _fill(rng.choice(_TABLES[lang][2]), lang, rng)


def generate(
    n_per_label: int = 300, seed: int = 0, langs: Sequence[str] = ("ja", "ko", "en")
) -> list[dict[str, Any]]:
    """Generate ``n_per_label`` SCPI, RELATED and NONE records per language (NONE twice as many).

    About 40 % of the documents surround the key sentence with one to six neutral sentences, so the
    topic also has to be found inside longer text (and long neutral text is not a topic).

    >>> recs = generate(2, seed=1, langs=("en",))
    >>> sorted({r["label"] for r in recs}), recs == generate(2, seed=1, langs=("en",))
    (['NONE', 'RELATED', 'SCPI'], True)
    """
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    joiner = {"ja": "", "ko": " ", "en": " "}
    for lang in langs:
        topics = _TABLES[lang][0]
        cats = list(topics)
        plan = [("SCPI", n_per_label), ("RELATED", n_per_label), ("NONE", 2 * n_per_label)]
        for label, count in plan:
            for i in range(count):
                if label == "NONE":
                    key, categories = _neutral(lang, rng), []
                else:
                    # Weighted towards the categories real data holds most (CRIME, MEDICAL).
                    cat = rng.choices(cats, weights=[3, 4, 1, 1])[0]
                    kind = "person" if label == "SCPI" else "general"
                    key, categories = _fill(rng.choice(topics[cat][kind]), lang, rng), [cat]
                parts = [key]
                if rng.random() < 0.4:
                    for _ in range(rng.randint(1, 6)):
                        parts.insert(rng.randint(0, len(parts)), _neutral(lang, rng))
                out.append(
                    {
                        "id": f"synth-{lang}-{label.lower()}-{i:05d}",
                        "lang": lang,
                        "source": SOURCE,
                        "text": joiner[lang].join(parts),
                        "label": label,
                        "categories": categories,
                    }
                )
    return out
