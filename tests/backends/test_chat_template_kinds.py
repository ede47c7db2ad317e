"""A causal LM without a chat template answers no chat requests, told before it loads: suites leave the
chat tasks out with the reason, a chat task named on its own is one line (exit 2), and a generation task
chooses plain continuation.  The GGUF header reader finds the same keys as the gguf package."""

from __future__ import annotations

import json
from pathlib import Path

import cli_fuzz
import pytest

from genderscope.backends.hf.causal import HFCausalLMBackend
from genderscope.backends.hf.gguf_meta import metadata_keys
from genderscope.core.primitives import CHAT


def _tokenizer_dir(root: Path, template: str | None) -> Path:
    root.mkdir()
    config = {"model_max_length": 64} | ({"chat_template": template} if template else {})
    (root / "tokenizer_config.json").write_text(json.dumps(config))
    return root


def test_kinds_follow_the_chat_template(tmp_path: Path) -> None:
    base = _tokenizer_dir(tmp_path / "base", None)
    instruct = _tokenizer_dir(tmp_path / "instruct", "{{ messages }}")
    assert CHAT not in HFCausalLMBackend.kinds_for(str(base))
    assert HFCausalLMBackend.kinds_for(str(instruct)) == HFCausalLMBackend.request_kinds
    (base / "chat_template.jinja").write_text("{{ messages }}")
    assert CHAT in HFCausalLMBackend.kinds_for(str(base))
    # what cannot be told before loading keeps every kind (a hub name, a missing path)
    assert HFCausalLMBackend.kinds_for("org/model-name") == HFCausalLMBackend.request_kinds


def _gguf(path: Path, template: str | None) -> Path:
    gguf = pytest.importorskip("gguf")
    import numpy as np

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_token_list(["<s>", "</s>", "hello", "world"] * 50)
    w.add_token_scores([0.5] * 200)
    w.add_uint32("llama.context_length", 32)
    if template:
        w.add_chat_template(template)
    w.add_tensor("t", np.zeros((4, 4), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.parametrize("template", [None, "{{ messages }}"])
def test_gguf_header_keys_equal_the_gguf_package(tmp_path: Path, template: str | None) -> None:
    gguf = pytest.importorskip("gguf")

    f = _gguf(tmp_path / "m.gguf", template)
    pseudo = {"GGUF.version", "GGUF.tensor_count", "GGUF.kv_count"}
    assert metadata_keys(f) == set(gguf.GGUFReader(str(f)).fields) - pseudo
    assert (CHAT in HFCausalLMBackend.kinds_for(str(f))) == bool(template)


def test_not_a_gguf_file_keeps_every_kind(tmp_path: Path) -> None:
    f = tmp_path / "broken.gguf"
    f.write_bytes(b"GGML" + bytes(20))
    with pytest.raises(ValueError, match="not a GGUF file"):
        metadata_keys(f)
    assert HFCausalLMBackend.kinds_for(str(f)) == HFCausalLMBackend.request_kinds


def test_suite_and_named_task_on_a_base_model(tmp_path: Path) -> None:
    base = _tokenizer_dir(tmp_path / "base", None)
    model = f"hf-causal:{base}"
    named = cli_fuzz.invoke(["run", "gest", "--model", model, "--out", str(tmp_path / "g")])
    assert named.code == 2 and named.escaped is None, (named.code, named.stderr)
    lines = [x for x in named.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "cannot run on this hf-causal model" in lines[0]
    assert "chat template" in lines[0]

    from genderscope.core.suites import expand

    kinds = HFCausalLMBackend.kinds_for(str(base))
    got = expand(["all"], kinds, "hf-causal", HFCausalLMBackend.request_kinds)
    assert "gest" not in got.tasks and "chat template" in got.left_out["gest"] and "crows-pairs" in got.tasks
    suite = cli_fuzz.invoke(["run", "genderbench", "--model", model, "--out", str(tmp_path / "s")])
    assert suite.code == 2 and "chat template" in suite.stderr, suite.stderr


def test_self_debias_reads_the_wrapped_models_template(tmp_path: Path) -> None:
    from genderscope.backends.self_debias import SelfDebiasBackend

    base = _tokenizer_dir(tmp_path / "base", None)
    assert CHAT not in SelfDebiasBackend.kinds_for(f"hf-causal:{base}")
    assert CHAT in SelfDebiasBackend.kinds_for("hf-causal:org/model-name")
