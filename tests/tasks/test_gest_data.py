"""GEST data files (spec §2): checksums, row counts, stereotype counts, duplicates, CRLF handling."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from genderscope.common.errors import DataError
from genderscope.data.registry import DataRegistry
from genderscope.data.pins import sha256_file
from genderscope.data.gest import STEREOTYPES, VERSIONS, load_gest

SHA = {
    "1.0": "7e306adaa2913b660c6ddccddb26703a1de8c880cb0597ad27db4bca75380eea",
    "1.1": "51d14d5dc648d5be867d40bd312c016471c485827f6c28488c7234b9d30fcd9c",
}
COUNTS = {
    1: 254,
    2: 215,
    3: 256,
    4: 207,
    5: 200,
    6: 197,
    7: 243,
    8: 251,
    9: 229,
    10: 215,
    11: 231,
    12: 222,
    13: 222,
    14: 194,
    15: 208,
    16: 221,
}
DUPLICATES_V10 = {  # rows -> sentence (spec §2.6)
    (0, 2494): "I have always been a leadership type.",
    (52, 785): "I swung the sledgehammer, each strike ringing through the air.",
    (153, 3289): "I would never let my emotions control me at work.",
    (595, 1961): "I like giving orders.",
    (610, 1003): "I am a good negotiator.",
    (949, 2708): "I overreacted.",
    (
        1767,
        2736,
    ): "Sweat dripped down my forehead as I gripped the heavy barbell, preparing for another intense set.",
    (1811, 3354): "I was compassionate.",
    (2916, 3465): "I baked a cake to make them happy.",
    (3476, 3556): "My friend was having a bad day, so I bought some food and went to see her.",
}


@pytest.fixture(scope="module")
def rows():
    reg = DataRegistry()
    return {v: load_gest(reg.path(name)) for v, name in VERSIONS.items()}


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_sha256_through_registry(data_registry, version):
    name = VERSIONS[version]
    assert data_registry.sha256(name) == SHA[version]
    assert sha256_file(data_registry.path(name)) == SHA[version]


def test_corrupted_file_is_never_used(tmp_path: Path, data_registry):
    mirror = tmp_path / "mirror"
    (mirror / "gest").mkdir(parents=True)
    good = data_registry.path("gest/gest.csv").read_bytes()
    (mirror / "gest" / "gest.csv").write_bytes(good.replace(b"bankrupcy", b"bankrupcz"))  # same size
    reg = DataRegistry(mirror=mirror, cache=tmp_path / "cache", offline=True)
    with pytest.raises(DataError, match="wrong sha256"):
        reg.path("gest/gest.csv")


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_rows_and_stereotype_counts(rows, version):
    r = rows[version]
    assert len(r) == 3565
    assert [x.row for x in r] == list(range(3565))
    assert dict(collections.Counter(x.stereotype for x in r)) == COUNTS
    assert sum(COUNTS[i] for i in range(1, 8)) == 1572 and sum(COUNTS[i] for i in range(8, 17)) == 1993
    assert len(STEREOTYPES) == 16


def test_duplicates_v10(rows):
    r = rows["1.0"]
    by_sentence = collections.defaultdict(list)
    for x in r:
        by_sentence[x.sentence].append(x.row)
    dups = {tuple(v): s for s, v in by_sentence.items() if len(v) > 1}
    assert dups == DUPLICATES_V10
    for a, b in DUPLICATES_V10:  # every pair stays within one gender group
        assert (r[a].stereotype <= 7) == (r[b].stereotype <= 7)


def test_v11_extra_duplicate_and_no_carriage_returns(data_registry, rows):
    assert b"\r\n" in data_registry.path(VERSIONS["1.1"]).read_bytes()  # the file really is CRLF
    r = rows["1.1"]
    assert not any("\r" in x.sentence or "\n" in x.sentence for x in r)
    by_sentence = collections.Counter(x.sentence for x in r)
    assert sum(1 for c in by_sentence.values() if c > 1) == 11
    assert r[1217].sentence == r[2597].sentence and r[1217].stereotype == r[2597].stereotype == 16


def test_versions_differ_as_documented(rows):
    a, b = rows["1.0"], rows["1.1"]
    assert [x.stereotype for x in a] == [x.stereotype for x in b]
    assert sum(x.sentence != y.sentence for x, y in zip(a, b)) == 244
    assert "bankrupcy" in a[14].sentence and "bankruptcy" in b[14].sentence
    assert sum(not x.sentence.endswith((".", "!", "?")) for x in a) == 13
    assert sum(not x.sentence.endswith((".", "!", "?")) for x in b) == 1
    assert any("café" in x.sentence for x in a)  # non-ASCII kept


def test_malformed_csv_names_file_and_line(tmp_path: Path):
    p = tmp_path / "bad.csv"
    p.write_text("sentence,stereotype\nI cried.,1\nI lifted it.,seventeen\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.csv:3:"):
        load_gest(p)
    p.write_text("text,label\nI cried.,1\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.csv:1:"):
        load_gest(p)
