"""Tokenizers of the screen and the language routing that picks one per document.

Japanese goes to MeCab (fugashi, wakati output) with the dictionary the model was trained with
(:data:`MECAB_DICTIONARIES`: ``unidic-lite``, the default, or ``ipadic``, ≈ 1.65× faster on real
Japanese here); Korean, English and anything else goes to a SentencePiece model trained by ``spcl
train`` on the training texts. Both are created per worker: MeCab taggers do not pickle, so a
:class:`Tokenizers` object is built where it is used.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

import fugashi
import sentencepiece as spm

MECAB_DICTIONARIES: tuple[str, ...] = ("unidic-lite", "ipadic", "none", "chars")
"""MeCab dictionaries a screen model can be trained with (``FeatureSettings.mecab_dic``); ``none``:
no MeCab, Japanese goes to SentencePiece like every other language; ``chars``: no MeCab, Japanese
becomes character uni- and bigrams in a key space of its own (Korean and English tokens
unchanged)."""
JA_TOKENS: dict[str, str] = {
    "unidic-lite": "MeCab (fugashi + unidic-lite, -Owakati), lower-cased",
    "ipadic": "MeCab (fugashi GenericTagger + ipadic, -Owakati), lower-cased",
    "none": "SentencePiece (spm.model), lower-cased",
    "chars": "character uni- and bigrams (no MeCab), keys of their own, lower-cased",
}
"""How the model card describes the Japanese tokens of each :data:`MECAB_DICTIONARIES` value."""
NO_MECAB: tuple[str, ...] = ("none", "chars")
"""The :data:`MECAB_DICTIONARIES` values that load no MeCab tagger."""


def mecab_tagger(dic: str = "unidic-lite") -> fugashi.GenericTagger:
    """A wakati MeCab tagger over dictionary ``dic`` (one of :data:`MECAB_DICTIONARIES`);
    ``ValueError`` for another name. ``ipadic`` is read through fugashi's ``GenericTagger`` from the
    ``ipadic`` package."""
    if dic == "unidic-lite":
        return fugashi.Tagger("-Owakati")
    if dic == "ipadic":
        import ipadic

        return fugashi.GenericTagger(f"{ipadic.MECAB_ARGS} -Owakati")
    raise ValueError(f"unknown MeCab dictionary {dic!r} (known: unidic-lite, ipadic)")


def route(lang: str, mecab_dic: str = "unidic-lite") -> str:
    """Which tokenizer serves a language: ``mecab`` for ``ja`` (``sp`` when the model uses no MeCab,
    ``chars`` for character n-grams), ``sp`` for everything else.

    >>> [route(x) for x in ("ja", "ko", "en", "other", "xx")]
    ['mecab', 'sp', 'sp', 'sp', 'sp']
    >>> route("ja", "none"), route("ja", "chars")
    ('sp', 'chars')
    """
    if lang != "ja" or mecab_dic == "none":
        return "sp"
    return "chars" if mecab_dic == "chars" else "mecab"


def train_sentencepiece(texts: Iterable[str], vocab_size: int, seed: int = 0) -> bytes:
    """Train a unigram SentencePiece model on ``texts`` (lower-cased); returns the ``.model`` bytes.

    Single-threaded, input order kept: the same texts give the same bytes. The vocabulary grows when
    the texts need more distinct characters than ``vocab_size`` allows. ``seed`` is recorded for
    symmetry with the other trainers; SentencePiece's unigram trainer is deterministic without one.
    """
    del seed
    lines = [t.lower().replace("\n", " ") for t in texts if t.strip()]
    if not lines:
        raise ValueError("no non-empty texts to train SentencePiece on")
    n_chars = len(set("".join(lines)))
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=buf,
        vocab_size=max(vocab_size, n_chars + 64),
        hard_vocab_limit=False,
        model_type="unigram",
        character_coverage=0.9995,
        num_threads=1,
        shuffle_input_sentence=False,
        input_sentence_size=0,
        max_sentence_length=1 << 16,
        minloglevel=2,
    )
    return buf.getvalue()


class Tokenizers:
    """The two tokenizers of one worker: MeCab (dictionary ``mecab_dic``) for Japanese,
    SentencePiece for the rest."""

    def __init__(self, sp_model: bytes, mecab_dic: str = "unidic-lite") -> None:
        self.mecab = mecab_tagger(mecab_dic) if mecab_dic not in NO_MECAB else None
        self.mecab_dic = mecab_dic
        self.sp_model = bytes(sp_model)
        self.sp = spm.SentencePieceProcessor(model_proto=sp_model)

    @property
    def sp_vocab_size(self) -> int:
        """Number of SentencePiece ids (column indices of the unigram block)."""
        return int(self.sp.get_piece_size())

    def wakati(self, texts: Sequence[str]) -> list[str]:
        """MeCab word segmentation: one space-separated string per text (newlines dropped)."""
        if self.mecab is None:
            raise ValueError(f"this screen uses no MeCab (mecab_dic={self.mecab_dic!r})")
        parse = self.mecab.parse
        return [parse(t) for t in texts]

    def pieces(self, texts: Sequence[str]) -> list[list[int]]:
        """SentencePiece ids per text."""
        return self.sp.encode(list(texts), num_threads=1)
