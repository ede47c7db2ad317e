"""Model files: locating a model (directory, GGUF file, local HF cache), weight fingerprints (sha256,
cached by path, size and mtime), loading with transformers, and the converted cache of GGUF files."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import struct
import time
import types
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from genderscope.common.errors import BackendError
from genderscope.core.paths import display_path
from genderscope.common.home import home

_WEIGHT_RE = re.compile(r".*\.(safetensors|bin|gguf|pt|pth|h5|msgpack)$")


def file_sha256(path: Path) -> str:
    """sha256 of a file, cached in ``$GENDERSCOPE_HOME/models/hashes.json`` by (path, size, mtime)."""
    st = path.stat()
    key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    cache_file = home() / "models" / "hashes.json"
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    if key in cache:
        return cache[key]
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    cache[key] = h.hexdigest()
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache_file.with_suffix(f".tmp{os.getpid()}")  # two processes may hash at once
    tmp.write_text(json.dumps(cache))
    tmp.replace(cache_file)
    return cache[key]


def weights_hash(files: Sequence[Path]) -> str:
    """One hex digest over the sha256 of every weight file (sorted by name)."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda p: p.name):
        h.update(f.name.encode() + b"\0" + file_sha256(f).encode() + b"\0")
    return h.hexdigest()[:16]


@dataclass
class ModelSource:
    """Where a model comes from: a local directory (optionally with a GGUF file in it) or a hub name."""

    spec: str
    path: Path | None
    gguf_file: str | None
    revision: str | None

    @property
    def load_name(self) -> str:
        return str(self.path) if self.path is not None else self.spec


def locate(target: str, gguf: str | None = None, revision: str | None = None) -> ModelSource:
    """Resolve ``NAME_OR_PATH`` (a directory, a ``.gguf`` file, or a hub name in the local cache)."""
    p = Path(target).expanduser()
    if target.endswith(".gguf"):
        if not p.is_file():
            raise BackendError(f"GGUF file {target} does not exist")
        return ModelSource(target, p.parent, p.name, revision)
    if p.is_dir():
        if gguf and not (p / gguf).is_file():
            raise BackendError(f"--gguf {gguf}: no such file in {p}")
        return ModelSource(target, p, gguf, revision)
    if p.exists():
        raise BackendError(f"{target} is a file but not a .gguf file; pass the model directory")
    try:  # a hub name already in the local cache (this tool never downloads models)
        from huggingface_hub import snapshot_download

        local = Path(snapshot_download(target, revision=revision, local_files_only=True))
        return ModelSource(target, local, gguf, revision)
    except Exception:  # noqa: BLE001 - any failure means "not available locally"
        raise BackendError(
            f"model {target!r} is neither a local directory nor in the local Hugging Face "
            "cache; download it first (e.g. `huggingface-cli download NAME`) or pass a path"
        ) from None


def has_chat_template(target: str) -> bool | None:
    """Whether the model at ``target`` carries a chat template, read without loading it: a ``.gguf`` file's
    ``tokenizer.chat_template`` field, a directory's ``tokenizer_config.json`` ``chat_template`` or
    ``chat_template.jinja``/``.json`` file; None when it cannot be told (a hub name, a missing path, a
    directory of GGUF files)."""
    p = Path(target).expanduser()
    if target.endswith(".gguf") and p.is_file():
        return _gguf_has_chat_template(str(p.resolve()), p.stat().st_mtime_ns)
    if not p.is_dir() or not (p / "tokenizer_config.json").is_file():
        return None
    if (p / "chat_template.jinja").is_file() or (p / "chat_template.json").is_file():
        return True
    try:
        config = json.loads((p / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return bool(config.get("chat_template")) if isinstance(config, dict) else None


def kinds_without_untemplated_chat(kinds: frozenset[str], target: str) -> frozenset[str]:
    """``kinds`` less ``chat`` when the model at ``target`` shows it has no chat template (a base model)."""
    return kinds - {"chat"} if has_chat_template(target) is False else kinds


@functools.lru_cache(maxsize=16)
def _gguf_has_chat_template(path: str, mtime_ns: int) -> bool | None:
    """Whether a GGUF file's metadata holds ``tokenizer.chat_template`` (read once per file version)."""
    from genderscope.backends.hf.gguf_meta import metadata_keys

    try:
        return "tokenizer.chat_template" in metadata_keys(Path(path))
    except (OSError, ValueError, struct.error):  # an unreadable file is reported when the model loads
        return None


def source_fingerprint(src: ModelSource) -> str:
    """Model name + hash of its weight file(s) (or the revision when there are none)."""
    assert src.path is not None
    if src.gguf_file:
        files = [src.path / src.gguf_file]
    else:
        files = [
            f
            for f in src.path.iterdir()
            if f.is_file() and _WEIGHT_RE.match(f.name) and not f.name.endswith(".gguf")
        ]
    if files:
        return f"{Path(src.spec).name if src.path else src.spec}|w={weights_hash(files)}"
    return f"{src.spec}|rev={src.revision or 'none'}"


def gguf_converted_dir(src: ModelSource) -> Path:
    """Cache folder of the transformers copy of a GGUF file (keyed by the file's sha256)."""
    assert src.path is not None and src.gguf_file
    digest = file_sha256(src.path / src.gguf_file)[:16]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", src.gguf_file)[:60]
    return home() / "models" / f"gguf-{digest}-{slug}"


def load_pretrained(
    auto_cls: Any, src: ModelSource, dtype: Any, device: str, device_map: str | None
) -> tuple[Any, Any, dict[str, Any]]:
    """(model, tokenizer, loading info) in eval mode; GGUF files are converted once and cached."""
    from transformers import AutoTokenizer

    from genderscope.core.progress import step_done

    kwargs: dict[str, Any] = {"dtype": dtype, "output_loading_info": True}
    started = time.perf_counter()
    if device_map:
        kwargs["device_map"] = device_map
    try:
        if src.gguf_file:
            conv = gguf_converted_dir(src)
            if not (conv / "config.json").is_file():
                convert_gguf(auto_cls, src, dtype)
            model, info = auto_cls.from_pretrained(conv, **kwargs)
            tok = AutoTokenizer.from_pretrained(conv)
        else:
            model, info = auto_cls.from_pretrained(src.load_name, revision=src.revision, **kwargs)
            tok = AutoTokenizer.from_pretrained(src.load_name, revision=src.revision)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise BackendError(f"cannot load model {src.spec!r}: {str(exc).splitlines()[0]}") from None
    if not device_map:
        model.to(device)
    model.eval()
    step_done(f"loaded model {src.spec}", time.perf_counter() - started)
    return model, tok, dict(info or {})


def convert_gguf(auto_cls: Any, src: ModelSource, dtype: Any) -> Path:
    """Convert ``src``'s GGUF file to a transformers folder (:func:`gguf_converted_dir`) unless it is
    there already; returns the folder.  Safe to run in another process (the demo converts its models
    in the background): the folder appears only when complete."""
    from transformers import AutoTokenizer

    from genderscope.core.progress import step_done

    conv = gguf_converted_dir(src)
    if (conv / "config.json").is_file():
        return conv
    started = time.perf_counter()
    assert src.path is not None and src.gguf_file
    with _gguf_read_once():
        tok = AutoTokenizer.from_pretrained(src.path, gguf_file=src.gguf_file)
        model, _info = auto_cls.from_pretrained(
            src.path, gguf_file=src.gguf_file, dtype=dtype, output_loading_info=True
        )
    tmp = conv.with_name(f"{conv.name}.tmp{os.getpid()}")
    _forget_gguf_quantizer(model)  # the weights are already dequantized to `dtype`
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    if conv.exists():  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.rename(conv)
    step_done(
        f"converted GGUF {src.gguf_file} to transformers (cached in {display_path(conv)})",
        time.perf_counter() - started,
    )
    return conv


@contextmanager
def _gguf_read_once() -> Iterator[None]:
    """While active, ``gguf.GGUFReader`` reads a file into memory once and hands the same parsed reader
    to every later caller (transformers parses the file again for the tokenizer, the config and the
    weights).  Parsing ~800k metadata values of a 262k-token vocabulary from an in-memory array instead
    of a ``numpy.memmap`` (whose per-slice Python hooks dominate) halves each parse; the bytes, and so
    the converted model, are the same."""
    import gguf
    import gguf.gguf_reader as reader_module
    import numpy as np

    real_reader, real_np = gguf.GGUFReader, reader_module.np
    readers: dict[tuple[str, str], Any] = {}

    class _NumpyInMemory(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            return getattr(np, name)

        @staticmethod
        def memmap(path: Any, mode: str = "r", **_kw: Any) -> Any:
            return np.fromfile(path, dtype=np.uint8)

    def reader(path: Any, mode: str = "r") -> Any:
        key = (str(Path(path).resolve()), mode)
        if key not in readers:
            readers[key] = real_reader(path, mode) if mode != "r" else real_reader(path)
        return readers[key]

    gguf.GGUFReader = reader
    reader_module.np = _NumpyInMemory("numpy")
    try:
        yield
    finally:
        gguf.GGUFReader, reader_module.np = real_reader, real_np


def _forget_gguf_quantizer(model: Any) -> None:
    """Let ``save_pretrained`` write a GGUF-loaded model: transformers dequantizes GGUF weights on
    load but keeps a (non-serialisable) quantizer marker."""
    for attr in ("hf_quantizer", "quantization_method"):
        if hasattr(model, attr):
            try:
                setattr(model, attr, None)
            except AttributeError:
                pass
    if hasattr(model, "is_quantized"):
        try:
            model.is_quantized = False
        except AttributeError:
            pass
    if hasattr(model.config, "quantization_config"):
        try:
            delattr(model.config, "quantization_config")
        except AttributeError:
            pass
