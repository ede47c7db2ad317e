"""WinoBias loader: counts for all files of both releases, pairing, irregular lines, parse errors."""

from __future__ import annotations

import pytest

from genderscope.common.errors import DataError, UsageError
from genderscope.data.winobias_tables import LABELS
from genderscope.data.winobias_records import WinoBiasParseError, _LineError
from genderscope.data.winobias import load_file, load_pairs, parse_line, read_lines

FILES = [(t, s) for t in (1, 2) for s in ("dev", "test")]

# 2018-03 parse errors (spec §2.7): (type, split, label) -> lines
ERRORS_2018 = {
    (1, "dev", "anti"): [47, 58],
    (1, "dev", "pro"): [392],
    (2, "dev", "pro"): [62],
    (2, "dev", "anti"): [62, 364],
}


@pytest.fixture(scope="module")
def reg():
    from genderscope.data.registry import DataRegistry

    return DataRegistry()


_cache: dict = {}


def pairs(reg, release, t, s, **kw):
    key = (release, t, s, tuple(sorted(kw.items())))
    if key not in _cache:
        _cache[key] = load_pairs(reg, release, t, s, **kw)
    return _cache[key]


@pytest.mark.parametrize("t,s", FILES)
@pytest.mark.parametrize("label", LABELS)
def test_head_files_parse_completely(reg, t, s, label):
    lines, failures = load_file(reg, "head", label, t, s)
    assert len(lines) == 396 and failures == []
    assert [ln.line for ln in lines] == list(range(1, 397))
    assert all(ln.label == label for ln in lines)
    assert not any("label_inconsistent" in ln.flags for ln in lines)  # all head labels consistent


@pytest.mark.parametrize("t,s", FILES)
@pytest.mark.parametrize("label", LABELS)
def test_2018_files_counts_and_errors(reg, t, s, label):
    lines, failures = load_file(reg, "2018-03", label, t, s)
    assert len(lines) == 395
    bad = [i for i, ln in enumerate(lines, 1) if ln is None]
    assert bad == ERRORS_2018.get((t, s, label), [])
    for f in failures:  # every failure names release/file:line
        assert f.startswith(f"2018-03/{label}_stereotyped_type{t}.txt.{s}:")


@pytest.mark.parametrize(
    "t,s,n,female_first",
    [(1, "dev", 396, 40), (1, "test", 396, 56), (2, "dev", 396, 198), (2, "test", 394, 196)],
)
def test_head_pairs_and_female_first(reg, t, s, n, female_first):
    ws = pairs(reg, "head", t, s)
    assert len(ws.pairs) == n and ws.n_female_first == female_first
    for p in ws.pairs:
        assert p.pro.line == p.anti.line == p.line
        assert p.pro.referent == p.anti.referent
        assert p.pro.pronoun_gender != p.anti.pronoun_gender or "mixed_pronoun_gender" in p.flags


def test_head_type2_test_excludes_382_384(reg):
    ws = pairs(reg, "head", 2, "test")
    assert [e["line"] for e in ws.excluded] == [382, 384]
    everything = pairs(reg, "head", 2, "test", exclude=frozenset())
    assert len(everything.pairs) == 396
    assert everything.pairs[381].flags[0] == "not_minimal_pair"


def test_2018_test_pairs_and_authors(reg):
    assert len(pairs(reg, "2018-03", 1, "test").pairs) == 395
    ws = pairs(reg, "2018-03-authors", 1, "test", exclude=frozenset())
    assert len(ws.pairs) == 395 and ws.n_female_first == 56
    by = {p.line: p for p in ws.pairs}
    p141 = by[141]
    assert p141.pro.referent == "baker" and p141.anti.referent == "baker"
    assert p141.pro.sentence == "The baker yelled at the mover because his stove was broken."
    assert "label_inconsistent" in p141.flags
    assert "designer" in by[53].pro.sentence and "designar" not in by[53].anti.sentence
    assert "always asks" in by[100].pro.sentence and "becasue" not in by[218].anti.sentence
    assert "lawyer" in by[225].pro.sentence and "lawywer" not in by[241].pro.sentence
    assert "thanked the nurse" in by[240].anti.sentence
    # 6 swapped/void pairs + 141 + anti 278 = label_inconsistent in 7 pairs; all kept
    assert ws.flag_counts["label_inconsistent"] == 7
    # authors: no whitespace collapsing (double spaces kept), U+2019 kept
    assert "  " in by[5].pro.sentence
    assert any("\u2019" in p.pro.sentence for p in ws.pairs)
    with pytest.raises(UsageError, match="type 1 test"):
        load_pairs(reg, "2018-03-authors", 1, "dev")


def test_2018_dev_parse_errors_raise_or_exclude(reg):
    with pytest.raises(WinoBiasParseError) as exc:
        load_pairs(reg, "2018-03", 2, "dev")
    msg = str(exc.value)
    assert "2018-03/pro_stereotyped_type2.txt.dev:62" in msg and "anti_stereotyped_type2.txt.dev:364" in msg
    ws = load_pairs(reg, "2018-03", 2, "dev", on_parse_error="exclude")
    assert len(ws.pairs) == 393 and sorted(e["line"] for e in ws.excluded) == [62, 364]
    assert all(e["reason"] == "parse error" for e in ws.excluded)


def test_irregular_head_lines(reg):
    d1 = {p.line: p for p in pairs(reg, "head", 1, "dev").pairs}
    assert "text_mismatch" in d1[92].flags and "text_mismatch" in d1[212].flags
    assert "determiner_outside_bracket" in d1[162].flags
    for n in (333, 341, 369, 373):
        assert "extra_occupation" in d1[n].flags
    assert d1[27].pro.pronoun_spans.__len__() == 2 and d1[27].pro.pronoun == d1[27].pro.pronoun_spans[-1]
    assert "cross_split_duplicate" in d1[396].flags
    t1 = {p.line: p for p in pairs(reg, "head", 1, "test").pairs}
    assert (t1[279].pro.pronoun, t1[279].anti.pronoun) == ("himself", "she")
    assert (t1[296].pro.pronoun, t1[296].anti.pronoun) == ("him", "her")
    assert "text_mismatch" in t1[255].flags
    d2 = {p.line: p for p in pairs(reg, "head", 2, "dev").pairs}
    assert d2[72].pro.entities == ("developer", "cleaner") and "extra_occupation" in d2[72].flags
    assert d2[176].anti.sentence.startswith("The teacher asked the physician about")
    assert "doubled_determiner" in d2[176].flags and d2[176].pro.sentence.startswith(
        "The teacher asked the physician"
    )
    assert "cross_split_duplicate" in d2[395].flags and "cross_split_duplicate" in d2[396].flags
    t2 = {p.line: p for p in pairs(reg, "head", 2, "test").pairs}
    assert t2[3].pro.sentence.startswith("The assistant notified the chief about")
    assert "doubled_determiner" in t2[3].flags
    assert t2[231].pro.referent == t2[231].pro.entity1 and t2[232].pro.referent == t2[232].pro.entity1
    assert t2[307].anti.mention2.det == "an" and t2[323].pro.mention2.det == "a"


def test_2018_irregular_lines(reg):
    t = {p.line: p for p in pairs(reg, "2018-03", 1, "test").pairs}
    assert t[278].anti.pronoun == "himself" and "mixed_pronoun_gender" in t[278].flags
    assert "misspelled_occupation" in t[53].flags and "designar" in t[53].pro.sentence  # text not corrected
    assert t[53].pro.entities[1] == "designer" or t[53].pro.entities[0] == "designer"
    assert "  " not in t[5].pro.sentence  # 2018-03 collapses double spaces
    d2 = load_pairs(reg, "2018-03", 2, "dev", on_parse_error="exclude")
    p314 = {p.line: p for p in d2.pairs}[314]
    assert "no_determiner" in p314.flags and p314.pro.referent == "analyst"


def test_bad_lines_name_the_problem():
    kw = dict(release="head", file="x", line=1, label="pro")
    with pytest.raises(_LineError, match="nested"):
        parse_line("[The [developer] argued with the designer because [he] did.", **kw)
    with pytest.raises(_LineError, match="without"):
        parse_line("[The developer argued with the designer because he] did].", **kw)
    with pytest.raises(_LineError, match="not one of the pronouns"):
        parse_line("[The developer] argued with the designer because [it] did.", **kw)
    with pytest.raises(_LineError, match="stereotypically"):
        parse_line("[The developer] argued with the janitor because [he] did.", **kw)
    ok = parse_line("The developer argued with [the designer] because [she] did.", **kw)
    assert ok.referent == "designer" and ok.other == "developer" and ok.flags == ()
    anti = parse_line("The developer argued with [the designer] because [he] did.", **kw)
    assert anti.flags == ("label_inconsistent",)


class _FakeData:
    """Stands in for the data registry: every name resolves to one given file."""

    def __init__(self, path):
        self._p = path

    def path(self, name):
        return self._p


def test_head_numbering_and_empty_lines_are_checked(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("1 [The developer] argued with the designer because [he] did.\n3 The developer argued.\n")
    with pytest.raises(
        WinoBiasParseError, match=r"head/pro_stereotyped_type1.txt.dev:2: expected the line number 2"
    ):
        read_lines(_FakeData(f), "head", "pro", 1, "dev")
    f.write_text("[The developer] argued with the designer because [he] did.\n\nx\n")
    with pytest.raises(WinoBiasParseError, match=r"type1.txt.dev:2: empty line"):
        read_lines(_FakeData(f), "2018-03", "pro", 1, "dev")
    f.write_bytes(b"[The developer] argued \xff\n")
    with pytest.raises(DataError, match="not UTF-8"):
        read_lines(_FakeData(f), "2018-03", "pro", 1, "dev")


@pytest.mark.parametrize("t", [1, 2])
def test_release_line_correspondence(reg, t):
    """2018-03 test line k is head test line k+1 (type 1 for k >= 2, type 2 for all k); dev keeps numbers."""
    old = {p.line: p for p in pairs(reg, "2018-03", t, "test").pairs}
    new = {p.line: p for p in pairs(reg, "head", t, "test", exclude=frozenset()).pairs}
    ks = range(2 if t == 1 else 1, 396)
    same = sum(
        old[k].pro.entities == new[k + 1].pro.entities and old[k].pro.referent == new[k + 1].pro.referent
        for k in ks
    )
    assert same >= len(ks) - 3
    shifted_back = sum(old[k].pro.sentence == new[k].pro.sentence for k in ks)
    assert shifted_back < 50


class _OneFileData(_FakeData):
    """Every sentence file resolves to one given file; the occupation lists come from the registry."""

    def __init__(self, path, reg):
        super().__init__(path)
        self._reg = reg

    def path(self, name):
        return self._reg.path(name) if name.endswith("_occupations.txt") else self._p


def test_format_failures_are_all_listed_or_excluded(tmp_path, reg):
    """§2.9: the whole file is checked first; one error lists every failing line; exclude drops the pairs."""
    f = tmp_path / "x.txt"
    good = "[The developer] argued with the designer because [he] did."
    f.write_text(f"{good}\n\n{good}\n\n{good}\n")
    with pytest.raises(WinoBiasParseError) as exc:
        read_lines(_FakeData(f), "2018-03", "pro", 1, "dev")
    assert exc.value.failures == [
        "2018-03/pro_stereotyped_type1.txt.dev:2: empty line: ''",
        "2018-03/pro_stereotyped_type1.txt.dev:4: empty line: ''",
    ]
    fails: list = []
    assert read_lines(_FakeData(f), "2018-03", "pro", 1, "dev", fails) == [good, None, good, None, good]
    assert len(fails) == 2
    lines, failures = load_file(_OneFileData(f, reg), "2018-03", "pro", 1, "dev")
    assert [ln is None for ln in lines] == [False, True, False, True, False] and len(failures) == 2
    ws = load_pairs(_OneFileData(f, reg), "2018-03", 1, "dev", on_parse_error="exclude")
    assert [p.line for p in ws.pairs] == [1, 3, 5]
    assert [(e["line"], e["reason"]) for e in ws.excluded] == [(2, "parse error"), (4, "parse error")]


def test_capitalised_doubled_determiner_keeps_the_capital():
    line = parse_line(
        "The [the developer] argued with the designer because [he] was late.",
        release="head",
        file="x",
        line=1,
        label="pro",
    )
    assert line.sentence == "The developer argued with the designer because he was late."
    assert "doubled_determiner" in line.flags and line.mention1.det == "The" and line.mention1.det_start == 0
