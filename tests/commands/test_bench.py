"""One ``spcl bench <kind>`` group; the old ``bench-screen``/``bench-generalize`` are hidden,
deprecated aliases."""

from __future__ import annotations

import json

import pytest

import spcl.bench.screen
from spcl.cli import build_parser, main


def test_every_benchmark_is_a_kind_of_bench_and_the_old_names_are_hidden(
    capsys: pytest.CaptureFixture,
) -> None:
    parser = build_parser()
    for kind in ("filter", "dataframe", "screen", "generalize"):
        assert parser.parse_args(["bench", kind]).bench == kind
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    listed = capsys.readouterr().out
    assert "bench " in listed and "bench-screen" not in listed and "bench-generalize" not in listed


def test_old_bench_screen_prints_a_deprecation_line_then_the_same_output(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    calls = []

    def fake_bench(
        docs: int,
        batch: int,
        model: str | None,
        seed: int,
        rules: bool = True,
        corpus: str = "mixed",
        compare: str | None = None,
    ) -> dict[str, object]:
        calls.append((docs, batch, model, seed, rules, corpus, compare))
        return {"docs": docs, "batch": batch}

    monkeypatch.setattr(spcl.bench.screen, "bench_screen", fake_bench)
    assert main(["bench", "screen", "--docs", "7", "--batch", "3", "--no-rules"]) == 0
    new = capsys.readouterr()
    assert main(["bench-screen", "--docs", "7", "--batch", "3", "--no-rules"]) == 0
    old = capsys.readouterr()
    assert calls == [(7, 3, None, 0, False, "mixed", None)] * 2
    assert old.out == new.out and json.loads(new.out) == {"docs": 7, "batch": 3}
    assert new.err == ""
    assert (
        old.err
        == "spcl: 'bench-screen' is deprecated and goes in the next release; use 'spcl bench"
        " screen'\n"
    )


def test_bench_generalize_and_its_old_name_print_the_same_report(
    capsys: pytest.CaptureFixture,
) -> None:
    """The rules backend on two synthetic documents: same lines (timing apart) under both names."""
    assert main(["bench", "generalize", "--docs", "2"]) == 0
    new = capsys.readouterr()
    assert main(["bench-generalize", "--docs", "2"]) == 0
    old = capsys.readouterr()

    def untimed(out: str) -> list[str]:
        return [line for line in out.splitlines() if '"seconds"' not in line]

    assert untimed(old.out) == untimed(new.out)
    assert new.out.count("== ") == 2 and '"documents": 2' in new.out
    assert "'bench-generalize' is deprecated" in old.err and "deprecated" not in new.err
