"""A real local Ray cluster for tests and benchmarks: ``ray start --head`` on 127.0.0.1, stopped by PID.

:func:`local_ray_cluster` starts a head node (and optionally worker nodes) with a private temporary folder,
yields its address, and afterwards ends exactly the processes whose command line names that folder
(never ``ray stop``, which ends every Ray process of the machine).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ray_command() -> list[str]:
    """``ray`` of this interpreter's environment."""
    exe = Path(sys.executable).parent / "ray"
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "import sys; from ray.scripts.scripts import main; sys.exit(main())"]


def _pids_naming(marker: str) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if marker in cmd:
            out.append(int(entry.name))
    return out


def _with_descendants(pids: list[int]) -> list[int]:
    """``pids`` and every process below them (Ray's agents rename themselves, so the marker misses them)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    tree = set(pids)
    grew = True
    while grew:
        new = {p for p, pp in parent.items() if pp in tree and p not in tree}
        tree |= new
        grew = bool(new)
    return sorted(tree)


def stop_pids(pids: list[int], grace: float = 5.0) -> None:
    """SIGTERM each PID, then SIGKILL the ones still there after ``grace`` seconds."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.time() + grace
    alive = list(pids)
    while alive and time.time() < deadline:
        alive = [p for p in alive if Path(f"/proc/{p}").exists() and not _zombie(p)]
        time.sleep(0.1)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _zombie(pid: int) -> bool:
    try:
        return " Z " in Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True


@contextmanager
def local_ray_cluster(
    num_cpus: int = 2, workers: int = 0, env: Mapping[str, str] | None = None, timeout: float = 60.0
) -> Iterator[str]:
    """A head node with ``num_cpus`` CPUs (+ ``workers`` worker nodes with 1 CPU each) on 127.0.0.1;
    yields ``127.0.0.1:PORT``. ``env``: the environment of the nodes (PYTHONPATH for genderscope)."""
    temp = tempfile.mkdtemp(prefix="gsray", dir="/tmp")  # short: Ray's socket paths must stay < 108 bytes
    port = free_port()
    environ = {**os.environ, **(env or {}), "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--node-ip-address=127.0.0.1", "--disable-usage-stats"]
    head = ray_command() + [
        "start",
        "--head",
        f"--port={port}",
        f"--num-cpus={num_cpus}",
        f"--temp-dir={temp}",
        "--include-dashboard=false",
        f"--node-manager-port={free_port()}",
        f"--object-manager-port={free_port()}",
        *common,
    ]
    address = f"127.0.0.1:{port}"
    try:
        subprocess.run(head, env=environ, check=True, capture_output=True, timeout=timeout)
        for _ in range(workers):
            node = ray_command() + ["start", f"--address={address}", "--num-cpus=1", *common]
            subprocess.run(node, env=environ, check=True, capture_output=True, timeout=timeout)
        yield address
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"ray start failed: {exc.stderr.decode(errors='replace')[-2000:]}") from None
    finally:
        stop_pids(_with_descendants(_pids_naming(temp)))
        shutil.rmtree(temp, ignore_errors=True)
