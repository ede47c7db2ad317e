"""Tiny, random-initialised Hugging Face models for tests, benchmarks and the demo (never downloaded).

* :func:`build_tiny_mlm`: a BERT-style masked LM with a WordPiece tokenizer whose vocabulary is
  given explicitly (no trainer, so it is identical in every process).
* :func:`build_tiny_causal`: a GPT-2-style causal LM with a WordLevel tokenizer and ``<s>``/``</s>``
  (optionally adding ``<s>`` itself, as Llama's tokenizer does).
* :func:`likelihood_task_texts`: the texts of the four likelihood tasks (a vocabulary for a causal LM
  that runs them).

Both save model and tokenizer with ``save_pretrained`` into a directory and return it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

WORD_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)

MLM_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CAUSAL_SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]


@dataclass(frozen=True)
class TinySize:
    """The size of a tiny model: hidden width, transformer layers, attention heads."""

    hidden: int = 32
    layers: int = 2
    heads: int = 2


def words_of(texts: Iterable[str]) -> list[str]:
    """Sorted distinct words and punctuation marks of ``texts`` (as BERT pre-tokenisation splits them)."""
    return sorted({w for t in texts for w in WORD_RE.findall(t)})


def genda_lens_texts(data_registry) -> list[str]:  # noqa: ANN001 - a DataRegistry
    """All lines of the GenDa Lens DaWinoBias and ABC files, plus their lowercased forms."""
    out: list[str] = []
    for name in (
        "genda_lens/DaWinoBias_anti_stereotyped_evalda.txt",
        "genda_lens/DaWinoBias_pro_stereotyped_evalda.txt",
        "genda_lens/abc_fem_sents.txt",
        "genda_lens/abc_male_sents.txt",
    ):
        lines = data_registry.path(name).read_text(encoding="utf-8").splitlines()
        out += lines + [ln.lower() for ln in lines]
    return out


def _vocab(words: Iterable[str], specials: list[str], pad_to: int | None) -> dict[str, int]:
    vocab = {t: i for i, t in enumerate(specials)}
    for w in words:
        vocab.setdefault(w, len(vocab))
    n = 0
    while pad_to is not None and len(vocab) < pad_to:
        vocab.setdefault(f"zz{n}", len(vocab))
        n += 1
    return vocab


def _tokenizer(model: Any, post_processor: Any, **specials: str) -> Any:
    """A fast tokenizer over the ``tokenizers`` model ``model``: BERT pre-tokenisation, WordPiece
    decoding, ``post_processor`` (None: none) and the special tokens named in ``specials``."""
    from tokenizers import Tokenizer, decoders, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(model)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tk.decoder = decoders.WordPiece(prefix="##")
    if post_processor is not None:
        tk.post_processor = post_processor
    return PreTrainedTokenizerFast(tokenizer_object=tk, **specials)


def _save_random(out_dir: Path, model_class: Any, config: Any, tok: Any, seed: int) -> Path:
    """Initialise ``model_class(config)`` from torch seed ``seed``; save it and ``tok`` into ``out_dir``."""
    import torch

    torch.manual_seed(seed)
    model = model_class(config).eval()
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    return out_dir


def build_tiny_mlm(
    out_dir: Path,
    words: Iterable[str],
    *,
    seed: int = 0,
    size: TinySize = TinySize(),
    vocab_size: int | None = None,
    continuation_pieces: Iterable[str] = ("##en", "##s"),
) -> Path:
    """A BERT-style masked LM with random weights; WordPiece vocabulary = specials + ``words``."""
    from tokenizers import models, processors
    from transformers import BertConfig, BertForMaskedLM

    vocab = _vocab(list(words) + list(continuation_pieces), MLM_SPECIALS, vocab_size)
    cls_sep = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    wordpiece = models.WordPiece(vocab=vocab, unk_token="[UNK]", continuing_subword_prefix="##")
    specials = {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]"}
    tok = _tokenizer(wordpiece, cls_sep, **specials, mask_token="[MASK]")
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=size.hidden,
        num_hidden_layers=size.layers,
        num_attention_heads=size.heads,
        intermediate_size=size.hidden * 2,
        max_position_embeddings=256,
        pad_token_id=vocab["[PAD]"],
    )
    return _save_random(out_dir, BertForMaskedLM, cfg, tok, seed)


def build_tiny_causal(
    out_dir: Path,
    words: Iterable[str],
    *,
    seed: int = 0,
    size: TinySize = TinySize(),
    add_bos: bool = False,
    n_positions: int = 256,
) -> Path:
    """A GPT-2-style causal LM with random weights; WordLevel vocabulary = specials + ``words``.
    ``add_bos``: the tokenizer adds ``<s>`` in front when asked for special tokens (as Llama's does)."""
    from tokenizers import models, processors
    from transformers import GPT2Config, GPT2LMHeadModel

    vocab = _vocab(words, CAUSAL_SPECIALS, None)
    bos = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", vocab["<s>"])]
    )
    specials = {"pad_token": "<pad>", "unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>"}
    tok = _tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"), bos if add_bos else None, **specials)
    cfg = GPT2Config(
        vocab_size=len(vocab),
        n_embd=size.hidden,
        n_layer=size.layers,
        n_head=size.heads,
        n_positions=n_positions,
        bos_token_id=vocab["<s>"],
        eos_token_id=vocab["</s>"],
        pad_token_id=vocab["<pad>"],
    )
    return _save_random(out_dir, GPT2LMHeadModel, cfg, tok, seed)


def likelihood_task_texts(data_registry) -> list[str]:  # noqa: ANN001 - a DataRegistry
    """GenDa Lens texts (:func:`genda_lens_texts`) plus English words of WinoBias and GEST prompts
    (enough vocabulary that most tokens of ``abc``, ``dawinobias``, ``winobias-lm`` and
    ``gest-likelihood`` are not ``<unk>``; the rest still score, as ``<unk>``)."""
    extra = "he she his her him man woman nurse said that The I . , ' \" : ; ? ! - a the was to of and in"
    return genda_lens_texts(data_registry) + [extra]
