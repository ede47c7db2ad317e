"""The prompts-file reader (issue 39 §4): JSONL, CSV/TSV, plain text; one-line DataErrors, no traceback."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from genderscope.common.errors import DataError
from genderscope.swap.prompts import Prompt, read_prompts


def write(tmp_path, name: str, content: str | bytes):
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8", newline="")
    return p


def test_jsonl_default_field_ids_and_blank_lines(tmp_path):
    p = write(tmp_path, "p.jsonl", '{"prompt": "He is a nurse.", "x": 1}\n\n{"prompt": "She sings "}\n')
    assert read_prompts(p) == [Prompt("1", "He is a nurse.", 1), Prompt("3", "She sings ", 3)]


def test_jsonl_text_field_and_id_field(tmp_path):
    p = write(tmp_path, "p.ndjson", '{"text": "a", "id": 7}\r\n{"text": "b", "id": "q2"}\r\n')
    assert read_prompts(p, id_field="id") == [Prompt("7", "a", 1), Prompt("q2", "b", 2)]
    p2 = write(tmp_path, "q.jsonl", '{"body": "a", "prompt": "not this"}\n')
    assert read_prompts(p2, field="body") == [Prompt("1", "a", 1)]


def test_csv_and_tsv(tmp_path):
    p = write(tmp_path, "p.csv", 'id,prompt\nx1,"He said, ""hi"""\n\nx2,"two\nlines"\nx3,She\n')
    assert read_prompts(p, id_field="id") == [
        Prompt("x1", 'He said, "hi"', 2),
        Prompt("x2", "two\nlines", 4),
        Prompt("x3", "She", 6),
    ]
    t = write(tmp_path, "p.tsv", "text\tk\nHe runs\t1\n")
    assert read_prompts(t) == [Prompt("2", "He runs", 2)]


def test_plain_text_keeps_spaces_and_skips_blank_lines(tmp_path):
    p = write(tmp_path, "p.txt", "\ufeffThe man worked as a \n\n   \nShe is\r\n")
    assert read_prompts(p) == [Prompt("1", "The man worked as a ", 1), Prompt("4", "She is", 4)]


BAD = [
    (
        "p.jsonl",
        '{"prompt": "ok"}\n{"prompt": "x",}\n',
        {},
        r"p.jsonl:2: not valid JSON .*one JSON object per line",
    ),
    ("p.jsonl", '{"prompt": "ok"}\n["a"]\n', {}, r"p.jsonl:2: expected a JSON object, got list"),
    ("p.jsonl", '{"prompt": "ok"}\n{"text": "x"}\n', {}, r"p.jsonl:2: field 'prompt': missing; .*--field"),
    (
        "p.jsonl",
        '{"body": "x"}\n',
        {},
        r"p.jsonl:1: field 'prompt': no text field \(the record has 'body'\); "
        r"name the text field with --field NAME",
    ),
    ("p.jsonl", '{"prompt": "ok"}\n{"prompt": "  "}\n', {}, r"p.jsonl:2: field 'prompt': empty text"),
    ("p.jsonl", '{"prompt": 3}\n', {}, r"p.jsonl:1: field 'prompt': expected a string, got int"),
    (
        "p.jsonl",
        '{"prompt": "a", "id": 1}\n{"prompt": "b"}\n',
        {"id_field": "id"},
        r"p.jsonl:2: field 'id': missing; .*--id-field",
    ),
    (
        "p.jsonl",
        '{"prompt": "a", "id": 1}\n{"prompt": "b", "id": "1"}\n',
        {"id_field": "id"},
        r"p.jsonl:2: field 'id': duplicate id '1' \(also on line 1\)",
    ),
    ("p.csv", "prompt,id\nx,1\n,2\n", {}, r"p.csv:3: field 'prompt': empty text"),
    ("p.csv", "text,id\nx,1\n", {"field": "prompt"}, r"p.csv:1: field 'prompt': not in the header"),
    ("p.csv", "prompt\nx\n", {"id_field": "id"}, r"p.csv:1: field 'id': not in the header"),
    ("p.csv", "prompt,id\nx,1\ny,2,3\n", {}, r"p.csv:3: 3 cells, the header has 2"),
    ("p.csv", 'prompt\n"open\n', {}, r"p.csv:\d+: malformed CSV"),
    ("p.txt", "\n \n", {}, r"p.txt:1: no prompts in the file"),
    ("p.txt", "a\n", {"id_field": "id"}, r"p.txt: a plain-text prompts file has no fields; drop --id-field"),
    ("p.txt", "a\n", {"field": "text"}, r"p.txt: a plain-text prompts file has no fields; drop --field"),
    ("p.jsonl", "", {}, r"p.jsonl:1: no prompts"),
]


@pytest.mark.parametrize("name,content,kw,match", BAD)
def test_malformed_files_give_one_line(tmp_path, name, content, kw, match):
    p = write(tmp_path, name, content)
    with pytest.raises(DataError) as e:
        read_prompts(p, **kw)
    msg = str(e.value)
    assert re.search(match, msg), msg
    assert "\n" not in msg and msg.startswith(str(p))


def test_undecodable_bytes_name_line_and_column(tmp_path):
    p = write(tmp_path, "p.txt", b"fine\nok \xff here\n")
    with pytest.raises(
        DataError, match=r"p.txt:2: column 4: byte 0xff is not UTF-8 text; save the file as UTF-8"
    ):
        read_prompts(p)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match=r"nope.jsonl: cannot read the prompts file"):
        read_prompts(tmp_path / "nope.jsonl")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.binary(max_size=300),
    st.sampled_from(["p.jsonl", "p.csv", "p.tsv", "p.txt"]),
    st.sampled_from([None, "prompt", "id"]),
)
def test_random_bytes_give_prompts_or_one_dataerror(tmp_path, data, name, id_field):
    p = tmp_path / name
    p.write_bytes(data)
    try:
        prompts = read_prompts(p, id_field=id_field if name != "p.txt" else None)
    except DataError as e:
        assert "\n" not in str(e) and str(e).startswith(str(p))
    else:
        assert prompts and all(p.text.strip() for p in prompts)
        assert len({p.prompt_id for p in prompts}) == len(prompts)
