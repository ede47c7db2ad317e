"""The GGUF conversion's reading shortcut (``hf_models._gguf_read_once``): the file is parsed once, from
memory, into the same fields and tensors that ``gguf.GGUFReader`` reads from its memory map."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from genderscope.backends.hf.models import _gguf_read_once  # noqa: E402


def _tiny_gguf(path: Path) -> Path:
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_string("general.name", "tiny")
    w.add_uint32("llama.block_count", 2)
    w.add_array("tokenizer.ggml.tokens", [f"tok{i}" for i in range(300)])
    w.add_array("tokenizer.ggml.scores", [float(-i) for i in range(300)])
    w.add_tensor("token_embd.weight", np.arange(48, dtype=np.float32).reshape(6, 8))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _contents(reader: object) -> tuple[dict, dict]:
    fields = {k: [p.tobytes() for p in f.parts] for k, f in reader.fields.items()}
    tensors = {t.name: (t.tensor_type, np.asarray(t.data).tobytes()) for t in reader.tensors}
    return fields, tensors


def test_read_once_parses_the_same_and_only_once(tmp_path: Path) -> None:
    path = _tiny_gguf(tmp_path / "tiny.gguf")
    plain = gguf.GGUFReader(path)
    real = gguf.GGUFReader
    with _gguf_read_once():
        first = gguf.GGUFReader(path)
        assert gguf.GGUFReader(str(path)) is first  # transformers' later parses get the same reader
        assert not isinstance(first.data, np.memmap)
        assert _contents(first) == _contents(plain)
    assert gguf.GGUFReader is real and isinstance(gguf.GGUFReader(path).data, np.memmap)


def test_read_once_restores_the_reader_after_an_error(tmp_path: Path) -> None:
    real = gguf.GGUFReader
    with pytest.raises(RuntimeError), _gguf_read_once():
        raise RuntimeError("conversion failed")
    assert gguf.GGUFReader is real
