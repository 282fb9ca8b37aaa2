"""Person-cue features: a topic word and a cue of an identifiable person in the same sentence.

A bag of words fires on the topic (病院, 진단, court) whoever it concerns. What makes a passage
sensitive personal information is a person: "my mother was diagnosed" against "the hospital opened a
ward". Per document, four counts of sentences holding a topic word of the model's lexicon (MEDICAL,
CRIME, DISABILITY, OTHER terms) together with

1. a first-person word (私/僕, 저/제가/나는, I/my/me),
2. an honorific or title next to a name (さん/氏/様, 씨/님, Mr/Ms/Dr),
3. a family or partner word (母/夫, 엄마/남편, mother/husband),

and 4. all sentences with a topic word. Only documents with a lexicon topic hit are scanned (the
rest get zeros), so ordinary text costs one array test. The columns join the dense lexicon block.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

CUE_COLUMNS: tuple[str, ...] = (
    "TOPIC_FIRST_PERSON",
    "TOPIC_NAMED_PERSON",
    "TOPIC_FAMILY",
    "TOPIC_SENTENCE",
)
"""Order of the person-cue columns (after the lexicon kinds)."""
TOPIC_KINDS: tuple[str, ...] = ("MEDICAL", "CRIME", "DISABILITY", "OTHER")

_SENTENCE = re.compile(r"[^.!?。！？\n]+")
_CUES: dict[str, tuple[str, str, str]] = {
    "en": (
        r"\b(?:i|i'm|i've|i'd|i'll|im|ive|my|me|myself|mine)\b",
        r"\b(?:mr|mrs|ms|miss|dr)\b",
        r"\b(?:mother|father|mom|mum|dad|wife|husband|son|daughter|brother|sister|grandmother|"
        r"grandfather|grandma|grandpa|aunt|uncle|cousin|girlfriend|boyfriend|fiance|fiancee|"
        r"parents?|kids?|baby|family)\b",
    ),
    "ja": (
        r"私|僕|俺|わたし|あたし|ぼく|自分|うちの",
        r"さん|様|氏|くん|君|ちゃん|先生",
        r"母|父|妻|夫|息子|娘|兄|姉|弟|妹|祖母|祖父|家族|子ども|子供|旦那|嫁|主人|親|彼氏|彼女|"
        r"友達|友人",
    ),
    "ko": (
        r"저는|제가|저도|저를|저의|저한테|저희|나는|내가|나도|난 |내 |제 |저 ",
        r"씨|님",
        r"엄마|아빠|어머니|아버지|어머님|아버님|남편|아내|와이프|아들|딸|형|누나|언니|오빠|동생|"
        r"할머니|할아버지|가족|부모|남친|여친|남자친구|여자친구|친구|시어머니|장모",
    ),
}


class PersonCues:
    """Counts of :data:`CUE_COLUMNS` per document, for the languages of :data:`_CUES` (zeros
    elsewhere)."""

    def __init__(self, lexicon: Mapping[str, Mapping[str, Sequence[str]]]) -> None:
        self._topic: dict[str, re.Pattern[str]] = {}
        self._cues: dict[str, tuple[re.Pattern[str], ...]] = {}
        for lang, cues in _CUES.items():
            terms = sorted(
                {t.lower() for k in TOPIC_KINDS for t in lexicon.get(lang, {}).get(k, ())},
                key=lambda t: (-len(t), t),
            )
            if not terms:
                continue
            alt = "|".join(re.escape(t) for t in terms)
            self._topic[lang] = re.compile(rf"\b(?:{alt})\b" if lang == "en" else alt)
            self._cues[lang] = tuple(re.compile(c) for c in cues)

    def counts(
        self, lowered: Sequence[str], langs: Sequence[str], candidates: np.ndarray
    ) -> np.ndarray:
        """``(n, 4)`` float32 counts; ``lowered`` are the lower-cased texts, ``candidates`` the
        documents worth scanning (a lexicon topic hit)."""
        out = np.zeros((len(lowered), len(CUE_COLUMNS)), np.float32)
        for i in np.flatnonzero(candidates).tolist():
            topic = self._topic.get(langs[i])
            if topic is None:
                continue
            cues = self._cues[langs[i]]
            row = out[i]
            for m in _SENTENCE.finditer(lowered[i]):
                sentence = m.group()
                if topic.search(sentence) is None:
                    continue
                row[3] += 1
                for j, cue in enumerate(cues):
                    if cue.search(sentence) is not None:
                        row[j] += 1
        return out
