"""A Korean name a model found, glued to the word after it (informal text without spaces), is masked
there too.

The masker replaces PERSON values only where they stand as whole words once the value is a whole
word somewhere (``spcl.mask.words``): right for the CPU name finders' guesses (``표시`` in
``표시되는``), but a name the model named and the document writes as ``소지섭 … 소지섭하는듯``
stayed in clear in the second place. On the real names-gold-v1 Korean sentences, 17 of 3,381 gold
names were left unmasked that way even with the exact gold names as the model's rows.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.extract.backends import Extraction, Extractor
from spcl.mask import mask_text
from spcl.mask_stage import MaskJobConfig, run_mask_job

TEXT = (
    "소지섭 나오는 영화에서 소지섭하는듯 연기했다. 노다메 좋아요. 아직도 노다메의여운이 남아요."
    " 표시 기능."
)


pytestmark = pytest.mark.usefixtures("vault_key")


class Scripted(Extractor):
    """Test double (not a model): answers a fixed ``TYPE<TAB>ORIGINAL`` list for every document."""

    name = "scripted"
    model = "scripted-v0"

    def run(self, texts: list[str]) -> list[Extraction]:
        return [Extraction(raw="PERSON\t소지섭\nPERSON\t노다메\n") for _ in texts]


def test_a_models_name_is_masked_where_it_starts_an_eojeol(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": ["a"], "text": [TEXT], "lang": ["ko"]}), tmp_path / "in" / "p.parquet"
    )
    cfg = MaskJobConfig(
        input=str(tmp_path / "in"),
        output=str(tmp_path / "out"),
        vault=str(tmp_path / "v"),
        names=False,
    )
    run_mask_job(cfg, extractor=Scripted())
    rows = pq.read_table(next((tmp_path / "out" / "masked").glob("*.parquet"))).to_pylist()
    masked = rows[0]["masked_text"]
    assert "소지섭" not in masked and "노다메" not in masked
    assert "표시 기능" in masked  # nothing else changes


def test_the_rules_and_name_finder_rows_keep_the_whole_word_rule() -> None:
    r = mask_text("표시 기능. 표시되는 값", [("PERSON", "표시")])
    assert r.masked_text == "[PERSON_1] 기능. 표시되는 값"
