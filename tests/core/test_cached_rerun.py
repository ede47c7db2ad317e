"""What a fully cached rerun reuses: stored bootstrap count matrices, store reads in key order, the probe
data read once, the shared canonical JSON encoder - each giving exactly what the plain path gives."""

from __future__ import annotations

import json

import numpy as np

from genderscope.core.request_value import canonical_json
from genderscope.core.store import ResponseStore
from genderscope.stats.bootstrap import COUNTS_FILE, bootstrap_counts, count_matrix, stored_counts
from genderscope.tasks.chatprobe.probe import probe_data


def test_stored_counts_equal_the_draws_and_are_read_back(tmp_path):
    expected = count_matrix(37, 50, 7)
    first = stored_counts(37, 50, 7, tmp_path)
    path = tmp_path / COUNTS_FILE.format(n=37, b=50, seed=7)
    assert path.is_file() and first.dtype == np.uint8
    assert np.array_equal(first.astype(np.float64), expected)
    stamp = path.stat().st_mtime_ns
    again = stored_counts(37, 50, 7, tmp_path)
    assert np.array_equal(again, first) and path.stat().st_mtime_ns == stamp  # read, not drawn again


def test_cached_blocks_are_the_plain_blocks(tmp_path):
    for chunk in (None, 7):
        plain = list(bootstrap_counts(23, 40, 3, chunk=chunk))
        for _ in range(2):  # drawn and saved, then read
            cached = list(bootstrap_counts(23, 40, 3, chunk=chunk, cache=tmp_path))
            assert len(cached) == len(plain)
            for a, b in zip(cached, plain):
                assert a.dtype == b.dtype == np.float64 and np.array_equal(a, b)


def test_a_damaged_or_foreign_file_is_drawn_again(tmp_path):
    path = tmp_path / COUNTS_FILE.format(n=10, b=5, seed=1)
    path.write_bytes(b"not a matrix")
    assert np.array_equal(stored_counts(10, 5, 1, tmp_path), count_matrix(10, 5, 1))
    path.write_bytes(b"")
    assert np.array_equal(stored_counts(10, 5, 1, tmp_path), count_matrix(10, 5, 1))
    np.save(path, np.ones((5, 10), dtype=np.uint8) * 2)  # right shape, rows do not sum to N
    assert np.array_equal(stored_counts(10, 5, 1, tmp_path), count_matrix(10, 5, 1))


def test_an_unwritable_cache_folder_only_costs_the_saving(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    got = stored_counts(12, 4, 2, blocker / "sub")
    assert np.array_equal(got, count_matrix(12, 4, 2))


def test_get_many_in_any_order_with_duplicates_and_missing_keys(tmp_path):
    store = ResponseStore(tmp_path / "s.sqlite")
    keys = [f"{i:064x}" for i in range(2000)]
    store.put_many((k, "fp", "chat", 1, "{}", {"n": i}) for i, k in enumerate(keys) if i % 3)
    asked = list(reversed(keys)) + keys[:50]
    got = store.get_many(asked)
    assert got == {k: {"n": i} for i, k in enumerate(keys) if i % 3}
    store.close()


def test_probe_data_is_read_once():
    package = "genderscope.tasks.direct"
    assert probe_data(package) is probe_data(package)


def test_canonical_json_is_json_dumps_sorted_compact():
    value = {"b": [1, 2.5, None, True], "a": {"z": 'é \u2028 "q"', "y": float("nan")}, "c": -0.0}
    plain = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == plain


def test_word_tokens_are_kept_across_tokenizers_and_equal_nltk(tmp_path):
    from genderscope.data.registry import DataRegistry
    from genderscope.tasks.chatprobe.tokenize import WordTokenizer

    data = DataRegistry()
    texts = ["Yes. Dr. Smith isn't here, is he?", 'No!\n\nShe said: "maybe" (I think).', "é ß \u2028 x"]
    plain = WordTokenizer(data)
    first = WordTokenizer(data, tmp_path / "tokens.sqlite")
    assert [first(t) for t in texts] == [plain(t) for t in texts]
    first.flush()
    again = WordTokenizer(data, tmp_path / "tokens.sqlite")
    assert [again(t) for t in texts] == [plain(t) for t in texts]
    assert again._nltk is None  # every text came from the cache: NLTK never built


def test_an_unusable_token_cache_only_costs_the_caching(tmp_path):
    from genderscope.data.registry import DataRegistry
    from genderscope.tasks.chatprobe.tokenize import WordTokenizer

    blocker = tmp_path / "file"
    blocker.write_text("x")
    tok = WordTokenizer(DataRegistry(), blocker / "tokens.sqlite")
    assert tok("Hello there.") == ("Hello", "there", ".")
    tok.flush()
