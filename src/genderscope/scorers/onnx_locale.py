"""Set the ``locale`` of the ONNX ``StringNormalizer`` nodes of a serialised model (protobuf wire format).

onnxruntime's ``StringNormalizer`` lower-cases through a C++ locale, by default ``en_US.UTF-8``; on a
system without that locale (many containers: only ``C``, ``C.UTF-8`` and ``POSIX``) creating the session
fails.  :func:`with_locale` returns the model with an explicit ``locale`` attribute on those nodes, so
the same model runs under e.g. ``C.UTF-8`` (glibc's C.UTF-8 lower-cases every Unicode letter as
en_US.UTF-8 does).  Only the fields on the path model.graph (7) -> node (1) -> attribute (5) are
rewritten; everything else is copied byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterator

_LEN = 2  # wire type: length-delimited
_VARINT = 0
_ATTR_STRING = 3  # AttributeProto.AttributeType.STRING


def _read_varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _fields(data: bytes) -> Iterator[tuple[int, int, bytes, bytes]]:
    """(field number, wire type, payload of a length-delimited field or b"", the field's raw bytes)."""
    i = 0
    while i < len(data):
        start = i
        key, i = _read_varint(data, i)
        field, wire = key >> 3, key & 7
        payload = b""
        if wire == _VARINT:
            _, i = _read_varint(data, i)
        elif wire == _LEN:
            size, i = _read_varint(data, i)
            payload = data[i : i + size]
            i += size
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield field, wire, payload, data[start:i]


def _len_field(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | _LEN) + _varint(len(payload)) + payload


def _attribute_name(attribute: bytes) -> bytes:
    return next((p for f, w, p, _ in _fields(attribute) if f == 1 and w == _LEN), b"")


def _patch_node(node: bytes, locale: str) -> bytes:
    op_type = next((p for f, w, p, _ in _fields(node) if f == 4 and w == _LEN), b"")
    if op_type != b"StringNormalizer":
        return node
    kept = b"".join(
        raw
        for f, w, p, raw in _fields(node)
        if not (f == 5 and w == _LEN and _attribute_name(p) == b"locale")
    )
    attribute = (
        _len_field(1, b"locale") + _len_field(4, locale.encode()) + _varint(20 << 3) + _varint(_ATTR_STRING)
    )
    return kept + _len_field(5, attribute)


def _patch_graph(graph: bytes, locale: str) -> bytes:
    return b"".join(
        _len_field(1, _patch_node(p, locale)) if f == 1 and w == _LEN else raw
        for f, w, p, raw in _fields(graph)
    )


def with_locale(model: bytes, locale: str) -> bytes:
    """``model`` (a serialised ``ModelProto``) with ``locale`` set on every ``StringNormalizer`` node."""
    return b"".join(
        _len_field(7, _patch_graph(p, locale)) if f == 7 and w == _LEN else raw
        for f, w, p, raw in _fields(model)
    )


def string_normalizer_locales(model: bytes) -> list[str | None]:
    """The ``locale`` attribute of each ``StringNormalizer`` node (None: not set, onnxruntime's default)."""
    found: list[str | None] = []
    for f, w, graph, _ in _fields(model):
        if not (f == 7 and w == _LEN):
            continue
        for g, gw, node, _ in _fields(graph):
            if g != 1 or gw != _LEN:
                continue
            if (
                next((p for nf, nw, p, _ in _fields(node) if nf == 4 and nw == _LEN), b"")
                != b"StringNormalizer"
            ):
                continue
            value = None
            for nf, nw, attr, _ in _fields(node):
                if nf == 5 and nw == _LEN and _attribute_name(attr) == b"locale":
                    value = next((p.decode() for af, aw, p, _ in _fields(attr) if af == 4 and aw == _LEN), "")
            found.append(value)
    return found
