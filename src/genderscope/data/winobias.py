"""WinoBias sentence files (Zhao et al. 2018): parsing, pro/anti pairing, flags.

Three releases (spec ``winobias_adjectives.md`` §2): ``head`` (current upstream, numbered
lines, 396 per file), ``2018-03`` (the paper's release, 395 unnumbered lines) and
``2018-03-authors`` (2018-03 type 1 test with the hand edits of Briegel & Chen, §2.8).
Each line becomes a :class:`WinoBiasLine` (entities in mention order, referent, pronoun spans,
flags, located mentions in the normalised sentence); pro line N and anti line N form a
:class:`WinoBiasPair`.  Nothing here knows about adjectives or prompts.
"""

from __future__ import annotations
import re
from collections import Counter
from typing import Any

from genderscope.common.errors import DataError, UsageError
from genderscope.data.winobias_records import (
    OCCUPATIONS,
    Mention,
    WinoBiasLine,
    WinoBiasPair,
    WinoBiasParseError,
    WinoBiasSet,
    _LineError,
)
from genderscope.data.winobias_tables import (
    AUTHOR_EDITS,
    FLAGS,
    LABELS,
    MISSPELLINGS,
    PRONOUN_GENDER,
    RELEASES,
    RELEASE_DIRS,
    SPLITS,
    TYPES,
)


def parse_exclude_flags(raw: str | None) -> frozenset[str]:
    """The flags of a comma-separated ``--exclude`` value ("" or "none": no flag); unknown names raise."""
    raw = (raw or "").strip()
    if raw.lower() in ("", "none"):
        return frozenset()
    names = frozenset(s.strip() for s in raw.split(",") if s.strip())
    bad = names - set(FLAGS)
    if bad:
        raise UsageError(
            f"--exclude: unknown flag(s) {', '.join(sorted(bad))}; flags: {', '.join(FLAGS)}, or none"
        )
    return names


_DOUBLED_DET = re.compile(r"(?<![^\W_])(?:the|a|an) +(?=(?:the|a|an) )", re.IGNORECASE)
_DET_BEFORE = re.compile(r"(?:^|(?<=\s))(the|a|an)\s+$", re.IGNORECASE)
_HEAD_LINE = re.compile(r"^(\d+) (.*)$", re.DOTALL)
def file_name(label: str, wb_type: int, split: str) -> str:
    return f"{label}_stereotyped_type{wb_type}.txt.{split}"


def logical_name(release: str, label: str, wb_type: int, split: str) -> str:
    """Data-registry name of a sentence file, e.g. ``winobias-2018/anti_stereotyped_type2.txt.test``."""
    return f"{RELEASE_DIRS[release]}/{file_name(label, wb_type, split)}"


def check_combination(release: str, wb_type: int, split: str) -> None:
    if release not in RELEASE_DIRS:
        raise UsageError(f"unknown WinoBias release {release!r}; use one of {', '.join(RELEASES)}")
    if wb_type not in TYPES:
        raise UsageError(f"WinoBias type must be 1 or 2, got {wb_type!r}")
    if split not in SPLITS:
        raise UsageError(f"WinoBias split must be dev or test, got {split!r}")
    if release == "2018-03-authors" and (wb_type, split) != (1, "test"):
        raise UsageError("release 2018-03-authors exists only for type 1 test (--type 1 --split test)")


def read_lines(
    data: Any, release: str, label: str, wb_type: int, split: str, failures: list[str] | None = None
) -> list[str | None]:
    """Raw sentence texts of one file (number prefix removed, author edits applied), 1-based order.

    Lines that are empty or lack the expected number prefix are checked in the whole file first: with
    ``failures`` they are appended there (``release/file:line: reason: raw``) and left None, else one
    :class:`WinoBiasParseError` lists all of them (spec §2.9).
    """
    name = logical_name(release, label, wb_type, split)
    path = data.path(name)  # sha256-verified by the registry
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{release}/{file_name(label, wb_type, split)}: not UTF-8 ({exc})") from None
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    out: list[str | None] = []
    bad: list[str] = []
    fname = f"{release}/{file_name(label, wb_type, split)}"
    for i, raw in enumerate(parts, 1):
        if raw == "":
            bad.append(f"{fname}:{i}: empty line: {raw!r}")
            out.append(None)
            continue
        if release == "head":
            m = _HEAD_LINE.match(raw)
            if not m or int(m.group(1)) != i:
                bad.append(f"{fname}:{i}: expected the line number {i} and a space: {raw!r}")
                out.append(None)
                continue
            raw = m.group(2)
        out.append(raw)
    if bad and failures is None:
        raise WinoBiasParseError(bad)
    if failures is not None:
        failures += bad
    if release == "2018-03-authors":
        for line, labels, old, new in AUTHOR_EDITS:
            if label in labels and line <= len(out) and out[line - 1] is not None:
                if old not in out[line - 1]:  # type: ignore[operator]
                    raise DataError(
                        f"{fname}:{line}: cannot apply the 2018-03-authors edit {old!r} -> {new!r}"
                    )
                out[line - 1] = out[line - 1].replace(old, new, 1)  # type: ignore[union-attr]
    return out


def _brackets(text: str) -> tuple[list[str], list[int], list[str]]:
    """Characters and their span tags (0 outside, k for the k-th [...] span) and each span's text."""
    chars: list[str] = []
    tags: list[int] = []
    spans: list[str] = []
    cur = 0
    for ch in text:
        if ch == "[":
            if cur:
                raise _LineError("nested '['")
            spans.append("")
            cur = len(spans)
        elif ch == "]":
            if not cur:
                raise _LineError("']' without '['")
            cur = 0
        else:
            chars.append(ch)
            tags.append(cur)
            if cur:
                spans[cur - 1] += ch
    if cur:
        raise _LineError("'[' without ']'")
    return chars, tags, spans


def _delete(chars: list[str], tags: list[int], drop: set[int]) -> tuple[list[str], list[int]]:
    keep = [i for i in range(len(chars)) if i not in drop]
    return [chars[i] for i in keep], [tags[i] for i in keep]


def _normalise(chars: list[str], tags: list[int], release: str) -> tuple[list[str], list[int], bool]:
    """§3.4: collapse whitespace and doubled determiners (not for 2018-03-authors), strip the ends."""
    doubled = False
    if release != "2018-03-authors":
        drop: set[int] = set()
        for i, ch in enumerate(chars):
            if ch.isspace():
                if i > 0 and chars[i - 1].isspace():
                    drop.add(i)
                else:
                    chars[i] = " "
        chars, tags = _delete(chars, tags, drop)
        text = "".join(chars)
        drop = set()
        for m in _DOUBLED_DET.finditer(text):
            doubled = True
            drop.update(range(m.start(), m.end()))
            if chars[m.start()].isupper():  # "The the chief" -> "The chief" (keep a capital)
                chars[m.end()] = chars[m.end()].upper()
        if drop:
            chars, tags = _delete(chars, tags, drop)
    n0 = 0
    while n0 < len(chars) and chars[n0].isspace():
        n0 += 1
    n1 = len(chars)
    while n1 > n0 and chars[n1 - 1].isspace():
        n1 -= 1
    return chars[n0:n1], tags[n0:n1], doubled


def _tag_ranges(tags: list[int]) -> dict[int, tuple[int, int]]:
    """Bracket number -> the [start, end) character range its characters cover."""
    ranges: dict[int, tuple[int, int]] = {}
    for i, t in enumerate(tags):
        if t:
            s, e = ranges.get(t, (i, i + 1))
            ranges[t] = (min(s, i), max(e, i + 1))
    return ranges


def _occupations(sentence: str, release: str) -> list[tuple[int, int, str, bool]]:
    """Every occupation mention of ``sentence``: (start, end, canonical name, misspelled?); the current
    release's misspellings are mapped to their canonical names."""
    occ = []
    for m in OCCUPATIONS.regex(release != "head").finditer(sentence):
        form = m.group(1).lower()
        canonical = MISSPELLINGS.get(form, form) if release != "head" else form
        occ.append((m.start(), m.end(), canonical, canonical != form))
    return occ


def _mention(sentence: str, name: str, span: tuple[int, int]) -> Mention:
    """The mention of occupation ``name`` at ``span`` with the determiner just before it, if any."""
    s, e = span
    m = _DET_BEFORE.search(sentence, 0, s)
    if m:
        return Mention(name, s, e, m.start(1), m.group(1))
    return Mention(name, s, e, None, None)


def parse_line(raw: str, *, release: str, file: str, line: int, label: str) -> WinoBiasLine:
    """Parse one sentence (spec §2.4); raises ``_LineError`` with the reason on failure."""
    text = raw.replace("(", "").replace(")", "")
    chars, tags, spans = _brackets(text)
    if len(spans) < 2:
        raise _LineError(f"expected a referent span and a pronoun span, found {len(spans)} [...] span(s)")
    pronouns = tuple(s.strip() for s in spans[1:])
    for p in pronouns:
        if p not in PRONOUN_GENDER:
            raise _LineError(f"[{p}] is not one of the pronouns {', '.join(PRONOUN_GENDER)}")
    flags: list[str] = []
    genders = {PRONOUN_GENDER[p] for p in pronouns}
    if len(genders) > 1:
        flags.append("mixed_pronoun_gender")
    pronoun = pronouns[-1]
    pronoun_gender = PRONOUN_GENDER[pronoun]

    chars, tags, doubled = _normalise(chars, tags, release)
    if doubled:
        flags.append("doubled_determiner")
    sentence = "".join(chars)
    ranges = _tag_ranges(tags)

    occ = _occupations(sentence, release)
    first: dict[str, tuple[int, int]] = {}
    for s, e, c, _ in occ:
        first.setdefault(c, (s, e))
    if len(first) < 2:
        raise _LineError(
            f"expected two different occupations, found {len(first)} ({', '.join(first) or 'none'})"
        )
    if len(first) > 2 or len(occ) > 2:
        flags.append("extra_occupation")
    if any(m for *_, m in occ):
        flags.append("misspelled_occupation")
    e1, e2 = list(first)[:2]
    rs, re_ = ranges.get(1, (0, 0))
    inside = [c for s, e, c, _ in occ if s >= rs and e <= re_]
    if len(inside) != 1:
        raise _LineError(f"the first [...] span must name exactly one occupation, it names {len(inside)}")
    referent = inside[0]
    if referent not in (e1, e2) or not (rs <= first[referent][0] < re_):
        raise _LineError(f"the referent {referent!r} is not the first mention of entity 1 or 2")
    g1, g2 = OCCUPATIONS.gender(e1), OCCUPATIONS.gender(e2)
    if g1 == g2:
        raise _LineError(f"both occupations ({e1}, {e2}) are stereotypically {g1}")
    ref_gender = OCCUPATIONS.gender(referent)
    if (pronoun_gender == ref_gender) != (label == "pro"):
        flags.append("label_inconsistent")

    m1, m2 = _mention(sentence, e1, first[e1]), _mention(sentence, e2, first[e2])
    if m1.det is None or m2.det is None:
        flags.append("no_determiner")
    ref_m = m1 if referent == e1 else m2
    if ref_m.det_start is not None and ref_m.det_start < rs:
        flags.append("determiner_outside_bracket")
    pr = tuple(ranges[k] for k in sorted(ranges) if k >= 2 and k in ranges)
    return WinoBiasLine(
        release=release,
        file=file,
        line=line,
        label=label,
        raw=raw,
        sentence=sentence,
        entity1=e1,
        entity2=e2,
        referent=referent,
        other=e2 if referent == e1 else e1,
        referent_gender=ref_gender,
        pronoun_spans=pronouns,
        pronoun=pronoun,
        pronoun_gender=pronoun_gender,
        mention1=m1,
        mention2=m2,
        pronoun_ranges=pr,
        flags=tuple(flags),
    )


def _plain_key(raw: str) -> str:
    return " ".join(re.sub(r"[\[\]()]", "", raw).split())


def load_file(
    data: Any, release: str, label: str, wb_type: int, split: str
) -> tuple[list[WinoBiasLine | None], list[str]]:
    """Parse one file: (lines, None where the line failed; failure messages
    ``release/file:line: reason: raw``)."""
    OCCUPATIONS.load(data)
    fname = file_name(label, wb_type, split)
    failures: list[str] = []
    raws = read_lines(data, release, label, wb_type, split, failures)
    lines: list[WinoBiasLine | None] = []
    for i, raw in enumerate(raws, 1):
        if raw is None:  # format failure, already listed
            lines.append(None)
            continue
        try:
            lines.append(parse_line(raw, release=release, file=fname, line=i, label=label))
        except _LineError as exc:
            lines.append(None)
            failures.append(f"{release}/{fname}:{i}: {exc}: {raw}")
    return lines, failures


def _pair_flags(pro: WinoBiasLine, anti: WinoBiasLine) -> list[str]:
    flags = []
    if (pro.entity1, pro.entity2, pro.referent) != (anti.entity1, anti.entity2, anti.referent):
        flags.append("not_minimal_pair")
    if pro.masked() != anti.masked():
        flags.append("text_mismatch")
    if len(pro.pronoun_spans) != len(anti.pronoun_spans):
        flags.append("pronoun_count_mismatch")
    return flags


def load_pairs(
    data: Any,
    release: str = "head",
    wb_type: int = 1,
    split: str = "dev",
    exclude: frozenset[str] | set[str] = frozenset({"not_minimal_pair"}),
    on_parse_error: str = "raise",
) -> WinoBiasSet:
    """Pro/anti pairs of one release, type and split, after exclusions (spec §2.5, §2.6, §2.9).

    ``exclude``: flags whose pairs are dropped; ``on_parse_error``: ``raise`` (one
    :class:`WinoBiasParseError` listing every failing line of both files) or ``exclude``.
    """
    check_combination(release, wb_type, split)
    unknown = set(exclude) - set(FLAGS)
    if unknown:
        raise UsageError(f"unknown WinoBias flag(s) {', '.join(sorted(unknown))}; flags: {', '.join(FLAGS)}")
    if on_parse_error not in ("raise", "exclude"):
        raise UsageError("on_parse_error must be raise or exclude")
    parsed: dict[str, list[WinoBiasLine | None]] = {}
    failures: list[str] = []
    files = []
    for label in LABELS:
        lines, fails = load_file(data, release, label, wb_type, split)
        parsed[label] = lines
        failures += fails
        files.append(logical_name(release, label, wb_type, split))
    if failures and on_parse_error == "raise":
        raise WinoBiasParseError(failures)
    if len(parsed["pro"]) != len(parsed["anti"]):
        raise DataError(
            f"{release} type {wb_type} {split}: {len(parsed['pro'])} pro lines but "
            f"{len(parsed['anti'])} anti lines"
        )
    # cross-split duplicates: same text (brackets removed, whitespace collapsed) in the other split
    other_split = "test" if split == "dev" else "dev"
    dup: dict[str, set[str]] = {}
    if release != "2018-03-authors":
        for label in LABELS:
            dup[label] = {
                _plain_key(r)
                for r in read_lines(data, release, label, wb_type, other_split, [])
                if r is not None
            }
            files.append(logical_name(release, label, wb_type, other_split))
    reasons = {}
    for f in failures:
        loc, _, rest = f.partition(": ")
        n = int(loc.rsplit(":", 1)[1])
        reasons.setdefault(n, []).append(f"{loc.split('/', 1)[1]}: {rest}")
    pairs: list[WinoBiasPair] = []
    excluded: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    for n, (pro, anti) in enumerate(zip(parsed["pro"], parsed["anti"]), 1):
        if pro is None or anti is None:
            excluded.append({"line": n, "reason": "parse error", "errors": reasons.get(n, [])})
            continue
        flags = set(pro.flags) | set(anti.flags) | set(_pair_flags(pro, anti))
        if dup and (_plain_key(pro.raw) in dup["pro"] or _plain_key(anti.raw) in dup["anti"]):
            flags.add("cross_split_duplicate")
        ordered = tuple(f for f in FLAGS if f in flags)
        counts.update(ordered)
        hit = [f for f in ordered if f in exclude]
        if hit:
            excluded.append({"line": n, "reason": "excluded flags", "flags": hit})
            continue
        pairs.append(WinoBiasPair(n, pro, anti, ordered))
    return WinoBiasSet(
        release, wb_type, split, pairs, excluded, {f: counts[f] for f in FLAGS if counts[f]}, files
    )
