"""AWD-LSTM word-level language model (Merity et al. 2018; spec §7.1).

Embedding dropout (whole rows), locked (variational) dropout on embeddings / between layers / on the
output, DropConnect on each layer's hidden-to-hidden matrix (a functional call with the masked
weight, no parameter deletion), separate single-layer LSTMs emsize → nhid → … → emsize, a decoder
tied to the embedding (bias initialised to 0) and a full softmax.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

Hidden = list[tuple[torch.Tensor, torch.Tensor]]


@dataclass
class ForwardOutput:
    """Logits (T × B × V), the new hidden state, the last layer's raw output h and dropped output o."""

    logits: torch.Tensor
    hidden: Hidden
    raw_last: torch.Tensor
    dropped_last: torch.Tensor


def locked_dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """One Bernoulli mask per sequence and feature, shared over time (x: T × B × H), scaled by 1/(1−p)."""
    if not training or p <= 0:
        return x
    mask = x.new_empty((1, x.size(1), x.size(2))).bernoulli_(1 - p) / (1 - p)
    return x * mask


def embedding_dropout(weight: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Zero whole rows of the embedding matrix with probability p, scale kept rows by 1/(1−p)."""
    if not training or p <= 0:
        return weight
    mask = weight.new_empty((weight.size(0), 1)).bernoulli_(1 - p) / (1 - p)
    return weight * mask


class AWDLSTM(nn.Module):
    """The AWD-LSTM of spec §7.1. ``forward(input, hidden)`` with input T × B token ids."""

    def __init__(
        self,
        ntoken: int,
        emsize: int = 400,
        nhid: int = 1150,
        nlayers: int = 3,
        dropout: float = 0.4,
        dropouth: float = 0.3,
        dropouti: float = 0.65,
        dropoute: float = 0.1,
        wdrop: float = 0.5,
        tie_weights: bool = True,
    ):
        super().__init__()
        self.ntoken, self.emsize, self.nhid, self.nlayers = ntoken, emsize, nhid, nlayers
        self.dropout, self.dropouth, self.dropouti, self.dropoute, self.wdrop = (
            dropout,
            dropouth,
            dropouti,
            dropoute,
            wdrop,
        )
        self.tie_weights = tie_weights
        self.encoder = nn.Embedding(ntoken, emsize)
        sizes = [emsize] + [nhid] * (nlayers - 1) + [emsize if tie_weights else nhid]
        self.rnns = nn.ModuleList([nn.LSTM(sizes[i], sizes[i + 1]) for i in range(nlayers)])
        self.decoder = nn.Linear(sizes[-1], ntoken)
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        if tie_weights:
            self.decoder.weight = self.encoder.weight

    def init_hidden(self, batch: int) -> Hidden:
        """Zero (h, c) per layer."""
        w = self.encoder.weight
        return [
            (w.new_zeros(1, batch, rnn.hidden_size), w.new_zeros(1, batch, rnn.hidden_size))
            for rnn in self.rnns
        ]

    def _run_layer(self, rnn: nn.LSTM, x: torch.Tensor, h: tuple[torch.Tensor, torch.Tensor]):
        if self.training and self.wdrop > 0:
            w = F.dropout(rnn.weight_hh_l0, p=self.wdrop, training=True)
            return functional_call(rnn, {"weight_hh_l0": w}, (x, h))
        return rnn(x, h)

    def forward(self, tokens: torch.Tensor, hidden: Hidden) -> ForwardOutput:
        weight = embedding_dropout(self.encoder.weight, self.dropoute, self.training)
        x = F.embedding(tokens, weight)
        x = locked_dropout(x, self.dropouti, self.training)
        new_hidden: Hidden = []
        raw = x
        for i, rnn in enumerate(self.rnns):
            raw, h = self._run_layer(rnn, x, hidden[i])
            new_hidden.append(h)
            x = locked_dropout(raw, self.dropouth, self.training) if i < self.nlayers - 1 else raw
        dropped = locked_dropout(raw, self.dropout, self.training)
        return ForwardOutput(self.decoder(dropped), new_hidden, raw, dropped)


def detach_hidden(hidden: Hidden) -> Hidden:
    """Cut the graph between batches (the state is carried, its history is not)."""
    return [(h.detach(), c.detach()) for h, c in hidden]
