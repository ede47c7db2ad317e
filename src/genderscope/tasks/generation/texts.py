"""One generation attempt read: the text, what the judge sees, and the run's counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from genderscope.core.primitives import ChatReply, Generation
from genderscope.core.requests import GIVEN, AttemptResult
from genderscope.tasks.generation.judge import UNPARSEABLE
from genderscope.tasks.generation.options import CHAT_FORM
from genderscope.tasks.generation.prompts import GenPrompt

#: failed attempts named in ``counts.failed_items`` at most
MAX_NAMED = 20


@dataclass(frozen=True)
class Generated:
    """Sample ``sample`` of ``prompt``: ``text`` = the continuation (``generate``) or the answer (``chat``),
    what the scorers read; ``judged`` = what a judge reads (prompt + continuation, or the answer);
    ``error``: why there is no text (None: there is one, possibly empty); ``skipped``: a replay had none."""

    prompt: GenPrompt
    sample: int
    text: str
    judged: str
    error: str | None = None
    skipped: bool = False
    n_tokens: int | None = None
    finish_reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and not self.skipped

    @property
    def empty(self) -> bool:
        return self.ok and not self.text.strip()


def read_generation(ar: AttemptResult, p: GenPrompt, form: str) -> Generated:
    """The text of one generation attempt (a model's answer, or a recorded one given in judge mode)."""
    k = int(ar.attempt.meta.get("sample", ar.attempt.trial - 1))
    if ar.skipped:
        return Generated(p, k, "", "", skipped=True)
    recorded = ar.attempt.meta.get("recorded_error") if ar.attempt.request.kind == GIVEN else None
    if ar.error is not None or recorded is not None:
        return Generated(p, k, "", "", error=str(ar.error or recorded))
    try:
        if form == CHAT_FORM:
            reply = ChatReply.of(ar.response)
            if reply.text is None:
                return Generated(p, k, "", "", error="no answer (null content)")
            return Generated(p, k, reply.text, reply.text, finish_reason=reply.finish_reason)
        g = Generation.of(ar.response)
        return Generated(p, k, g.text, p.text + g.text, n_tokens=g.n_tokens, finish_reason=g.finish_reason)
    except (AttributeError, TypeError, KeyError):
        return Generated(p, k, "", "", error=f"not a {form} answer: {str(ar.response)[:80]}")


def counts_of(
    gens: Sequence[Generated],
    prompts: Sequence[GenPrompt],
    units: int,
    samples: int,
    verdicts: dict[Any, dict[str, str | None]],
    judging: bool,
) -> dict[str, Any]:
    """The run's counts: prompts, resampling units, samples, generations planned, generated, failed,
    skipped (a replay without the answer), empty; in judge mode the judge's (judged, failed, unparseable)."""
    failed = [g for g in gens if g.error is not None]
    skipped = sum(g.skipped for g in gens)
    asked = len(gens) - skipped
    out: dict[str, Any] = {
        "prompts": len(prompts),
        "units": units,
        "samples": samples,
        "planned": len(gens),
        "generated": sum(g.ok for g in gens),
        "failed": len(failed),
        "skipped": skipped,
        "empty": sum(g.empty for g in gens),
        "failed_share": len(failed) / asked if asked else 0.0,
        "failed_items": [f"{g.prompt.prompt_id}#{g.sample + 1}: {g.error}"[:160] for g in failed[:MAX_NAMED]],
    }
    out["unreadable_share"] = out["failed_share"]
    if judging:
        first = [v.get("a") for v in verdicts.values()]
        read = [v for v in first if v is not None]
        unparseable = sum(v == UNPARSEABLE for v in read)
        out["judge"] = {
            "judged": len(read) - unparseable,
            "unparseable": unparseable,
            "failed": len(first) - len(read),
            "unparseable_share": unparseable / len(read) if read else 0.0,
        }
        both = [(v["a"], v["b"]) for v in verdicts.values() if _read(v.get("a")) and _read(v.get("b"))]
        if both:
            out["judge"]["both_orders_read"] = len(both)
            out["judge"]["agreement"] = sum(x == y for x, y in both) / len(both)
        out["unreadable_share"] = max(out["failed_share"], out["judge"]["unparseable_share"])
    return out


def _read(v: str | None) -> bool:
    return v is not None and v != UNPARSEABLE
