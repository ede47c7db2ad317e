"""``loglikelihood`` on ``hf-causal`` as token trees: every shared prefix computed once, many items per batch.

The K sequences c + x^k of one request usually share a prefix: the whole context, and often the first words
of the continuations too (a CrowS-Pairs pair differs in one or two words).  The request's input tokens
(c + x^k without its last token, for every k) are merged into a prefix tree and laid out as ONE row in
depth-first order; a 4-D attention mask lets each token attend only to itself and its ancestors, and its
position id is its depth, so each node's hidden state — and its next-token prediction — equals the one the
separate sequence would give (float rounding aside).  The answer per continuation is
Σ_t ln p(x_t | c, x_<t), read from the logits at the parent node of each x_t.

Cost per request: the number of distinct prefixes (tree nodes) instead of Σ_k (|c| + |x^k| − 1) tokens;
rows of similar size are packed into one forward as the whole-sequence route packs sequences, and only the
logits of nodes that predict a scored token are computed (the model's head applied to those nodes' hidden
states, else ``logits_to_keep`` where the model supports it).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from genderscope.backends.hf.tensors import score_positions
from genderscope.core.backend import Emit
from genderscope.core.primitives import LoglikelihoodJson
from genderscope.core.requests import Job, Outcome

#: attention implementations known to take a custom additive 4-D mask unchanged
TREE_ATTENTION = ("sdpa", "eager")


@dataclass
class TokenTree:
    """One request's input tokens merged by prefix: ``tokens[i]`` at depth ``depth[i]`` under ``parent[i]``
    (−1 = a root), nodes in depth-first order (a parent precedes its children); ``targets[k]`` lists
    (node whose prediction scores it, token) for each token of continuation k."""

    tokens: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    targets: list[list[tuple[int, int]]] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.tokens)


def build_tree(ctx: list[int], conts: list[list[int]]) -> TokenTree:
    """The prefix tree of the inputs ``(ctx + x)[:-1]`` for every continuation x (ctx must not be empty)."""
    tree = TokenTree()
    child: dict[tuple[int, int], int] = {}
    for cont in conts:
        seq = ctx + cont
        nodes = insert_path(tree, child, seq[:-1])
        tree.targets.append([(nodes[t], seq[t + 1]) for t in range(len(ctx) - 1, len(seq) - 1)])
    return tree


def insert_path(tree: TokenTree, child: dict[tuple[int, int], int], seq: list[int]) -> list[int]:
    """Add ``seq`` to ``tree`` as a path from the root (sharing the nodes of an equal prefix; ``child``
    maps (node, token) to its child node); returns the node of each position."""
    node, nodes = -1, []
    for t, tok in enumerate(seq):
        nxt = child.get((node, tok))
        if nxt is None:
            nxt = child[(node, tok)] = tree.size
            tree.tokens.append(tok)
            tree.parent.append(node)
            tree.depth.append(t)
        node = nxt
        nodes.append(node)
    return nodes


def context_forest(
    items: list[tuple[list[int], list[int]]], cap: int
) -> list[tuple[TokenTree, list[int]]]:
    """Contexts of single-token requests merged into prefix trees across requests: ``items`` are (context,
    its one-token continuations); contexts are sorted, and each joins the previous one's tree when
    they share at least two leading tokens and the tree stays within ``cap`` nodes.  Returns each tree
    (``targets`` = [(its context's last node, continuation token)] per continuation, members in order) with
    the item indices in it."""
    order = sorted(range(len(items)), key=lambda i: items[i][0])
    groups: list[list[int]] = []
    prev: list[int] = []
    size = 0
    for i in order:
        ctx = items[i][0]
        common = next((t for t, (a, b) in enumerate(zip(prev, ctx)) if a != b), min(len(prev), len(ctx)))
        if groups and common >= 2 and size + len(ctx) - common <= cap:
            groups[-1].append(i)
            size += len(ctx) - common
        else:
            groups.append([i])
            size = len(ctx)
        prev = ctx
    out = []
    for members in groups:
        tree = TokenTree()
        child: dict[tuple[int, int], int] = {}
        for i in members:
            node = (insert_path(tree, child, items[i][0]) or [-1])[-1]
            tree.targets += [[(node, tok)] for tok in items[i][1]]
        out.append((tree, members))
    return out


def flat_tokens(ctx: list[int], conts: list[list[int]]) -> int:
    """Input tokens of the whole-sequence route for one request: Σ_k (|c| + |x^k| − 1)."""
    return sum(len(ctx) + len(c) - 1 for c in conts)


def fits(backend: Any) -> bool:
    """True when ``backend``'s model takes the tree route's custom 4-D attention mask."""
    impl = getattr(getattr(backend.model, "config", None), "_attn_implementation", None)
    return impl in TREE_ATTENTION


def max_row(backend: Any) -> float:
    """Longest tree row the route may build: a custom mask replaces a sliding-window mask too (Gemma 3,
    Mistral), so rows stay within the window where the model has one."""
    window = getattr(getattr(backend.model, "config", None), "sliding_window", None)
    return float(window) if isinstance(window, int) and window > 0 else float("inf")


def _ancestors(tree: TokenTree) -> Any:
    """Boolean (n, n) matrix: row i marks i and its ancestors (the keys node i may attend to)."""
    import numpy as np

    n = tree.size
    allowed = np.zeros((n, n), dtype=bool)
    for i, p in enumerate(tree.parent):
        if p >= 0:
            allowed[i] = allowed[p]
        allowed[i, i] = True
    return allowed


def _batch_inputs(backend: Any, trees: list[TokenTree]) -> tuple[Any, Any, Any]:
    """(input ids, position ids, additive 4-D mask) for ``trees`` as right-padded rows; a padding slot
    attends to itself only (no all-masked softmax row)."""
    import torch

    dtype = getattr(backend.model, "dtype", torch.float32)
    width = max(t.size for t in trees)
    ids = torch.full((len(trees), width), backend.pad_id, dtype=torch.long)
    pos = torch.zeros((len(trees), width), dtype=torch.long)
    allowed = torch.zeros((len(trees), 1, width, width), dtype=torch.bool)
    diag = torch.arange(width)
    allowed[:, 0, diag, diag] = True
    for r, tree in enumerate(trees):
        n = tree.size
        ids[r, :n] = torch.tensor(tree.tokens, dtype=torch.long)
        pos[r, :n] = torch.tensor(tree.depth, dtype=torch.long)
        allowed[r, 0, :n, :n] = torch.from_numpy(_ancestors(tree))
    mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min)
    dev = backend.device
    return ids.to(dev), pos.to(dev), mask.to(dev)


def _keeps_logits(model: Any) -> bool:
    try:
        return "logits_to_keep" in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


def _forward_rows(backend: Any, trees: list[TokenTree]) -> tuple[Any, dict[int, int]]:
    """Hidden states (or logits: only of the nodes that predict a scored token where the model's head is not
    split off and it keeps chosen logits) and {node slot: column} (same for each row)."""
    import torch

    ids, pos, mask = _batch_inputs(backend, trees)
    kw: dict[str, Any] = {}
    column = {slot: slot for slot in range(ids.shape[1])}
    if backend.head is None and _keeps_logits(backend.model):
        needed = sorted({node for t in trees for pairs in t.targets for node, _tok in pairs})
        kw["logits_to_keep"] = torch.tensor(needed, dtype=torch.long, device=ids.device)
        column = {slot: i for i, slot in enumerate(needed)}
    backend.count_forward(len(trees))
    if kw:
        return backend.model(input_ids=ids, attention_mask=mask, position_ids=pos, **kw).logits, column
    return backend.hidden(input_ids=ids, attention_mask=mask, position_ids=pos), column


def answer_trees(
    backend: Any, items: list[tuple[list[tuple[Job, int]], TokenTree, int]], emit: Emit
) -> None:
    """Score each (jobs, tree, whole-route token count) as one row, rows packed by size under the backend's
    scoring budget; a tree's targets belong to its jobs in order, (job, number of continuations) each.  Per
    continuation: Σ ln p (float64) and whether every token is the arg-max."""
    trees = [tree for _jobs, tree, _flat in items]

    def run(batch: list[int]) -> None:
        hidden, column = _forward_rows(backend, [trees[i] for i in batch])
        at: list[tuple[int, int]] = []
        targets: list[int] = []
        for r, i in enumerate(batch):
            for pairs in trees[i].targets:
                at += [(r, column[node]) for node, _tok in pairs]
                targets += [tok for _node, tok in pairs]
        picked, greedy = score_positions(backend, hidden, [r for r, _ in at], [c for _, c in at], targets)
        s = 0
        for i in batch:
            k = 0
            for job, n in items[i][0]:
                res = []
                for pairs in trees[i].targets[k : k + n]:
                    e = s + len(pairs)
                    res.append((float(picked[s:e].sum()), bool(greedy[s:e].all())))
                    s = e
                out: LoglikelihoodJson = {
                    "logprobs": [x[0] for x in res],
                    "n_tokens": [len(p) for p in trees[i].targets[k : k + n]],
                    "greedy": [x[1] for x in res],
                }
                k += n
                emit(job, Outcome(response=out))

    forward = sum(t.size for t in trees)
    counters = backend.counters
    counters["context_tokens_shared"] = counters.get("context_tokens_shared", 0) + sum(
        flat for _j, _t, flat in items
    ) - forward
    counters["tokens_forward"] = counters.get("tokens_forward", 0) + forward
    backend.batched([t.size for t in trees], run, backend.scoring_budget())
