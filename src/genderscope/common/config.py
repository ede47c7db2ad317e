"""The user configuration file, ``$GENDERSCOPE_HOME/config.toml``, and the data-mirror setting.

The file holds flat ``key = "string"`` lines (a subset of TOML), written by ``genderscope data mirror``.
Known keys: ``data_mirror`` (a folder laid out like ``shared/data``).

Where the data mirror is looked for, first match wins (:func:`data_mirror`):

1. ``$GENDERSCOPE_DATA_MIRROR`` (an empty value means "no mirror");
2. ``data_mirror`` in the config file;
3. ``$GENDERSCOPE_HOME/mirror`` when that folder exists (the documented default location);
4. ``../shared/data`` beside the source checkout genderscope runs from, when it holds a ``MANIFEST.tsv``
   (a fresh clone next to the shared mirror, offline: the Quickstart works without a setting).
   :func:`adopt_found_mirror` saves it as the setting, saying so once.

A mirror is a folder with a ``MANIFEST.tsv`` (``genderscope data mirror PATH`` refuses any other).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from genderscope.common.errors import UsageError
from genderscope.common.home import home

CONFIG_FILE = "config.toml"
MIRROR_ENV = "GENDERSCOPE_DATA_MIRROR"
MIRROR_KEY = "data_mirror"
#: the default mirror folder inside ``$GENDERSCOPE_HOME``
DEFAULT_MIRROR = "mirror"
#: the file every mirror folder holds (path, sha256, bytes, upstream, licence per file)
MIRROR_MANIFEST = "MANIFEST.tsv"

_LINE = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(#.*)?$')


def config_path() -> Path:
    """``$GENDERSCOPE_HOME/config.toml`` (it need not exist)."""
    return home() / CONFIG_FILE


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def read_config(path: Path | None = None) -> dict[str, str]:
    """The settings in the config file ({} when there is none); a malformed line is a one-line error."""
    path = path or config_path()
    if not path.is_file():
        return {}
    values: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line_no = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise UsageError(
            f"{path}:{line_no}: not UTF-8 text; fix the line or delete the file (`genderscope data mirror "
            "PATH` writes it again)"
        ) from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            raise UsageError(f'{path}:{n}: expected key = "value", got {line.strip()!r}')
        values[m.group(1)] = _unescape(m.group(2))
    return values


def write_setting(key: str, value: str | None, path: Path | None = None) -> Path:
    """Set ``key`` to ``value`` (None removes it) in the config file, keeping the other settings."""
    path = path or config_path()
    values = read_config(path)
    if value is None:
        values.pop(key, None)
    else:
        values[key] = value
    text = "# genderscope settings (genderscope data mirror PATH writes data_mirror)\n" + "".join(
        f'{k} = "{_escape(v)}"\n' for k, v in sorted(values.items())
    )
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


@dataclass(frozen=True)
class MirrorSetting:
    """The data mirror in effect: ``path`` (None = no mirror) and where it came from (``source``:
    ``environment``, ``config``, ``default``, ``found`` (beside the checkout) or ``none``)."""

    path: Path | None
    source: str


def mirror_setting() -> MirrorSetting:
    """The data mirror by the order in the module docstring."""
    env = os.environ.get(MIRROR_ENV)
    if env is not None:
        return MirrorSetting(Path(env).expanduser() if env.strip() else None, "environment")
    saved = read_config().get(MIRROR_KEY)
    if saved:
        return MirrorSetting(Path(saved).expanduser(), "config")
    default = home() / DEFAULT_MIRROR
    if default.is_dir():
        return MirrorSetting(default, "default")
    found = mirror_beside_checkout()
    if found is not None:
        return MirrorSetting(found, "found")
    return MirrorSetting(None, "none")


def mirror_beside_checkout() -> Path | None:
    """``../shared/data`` next to the source checkout this package runs from (``<clone>/src/genderscope``),
    when it holds a :data:`MIRROR_MANIFEST`; None for an installed package or no such folder."""
    package = Path(__file__).resolve().parents[1]
    if package.parent.name != "src" or not (package.parents[1] / "pyproject.toml").is_file():
        return None
    candidate = package.parents[2] / "shared" / "data"
    return candidate if (candidate / MIRROR_MANIFEST).is_file() else None


def adopt_found_mirror() -> None:
    """A mirror found beside the checkout (source ``found``) becomes the saved setting, with one line on
    stderr saying so; later runs read the setting (nothing more is said).  An unwritable config file
    leaves the mirror in use for this process only."""
    setting = mirror_setting()
    if setting.source != "found" or setting.path is None:
        return
    try:
        write_setting(MIRROR_KEY, str(setting.path))
        kept = "saved as your setting"
    except OSError:
        kept = "not saved: $GENDERSCOPE_HOME is not writable"
    print(
        f"data mirror: using {setting.path} (found beside this checkout; {kept}; "
        "`genderscope data mirror PATH` changes it)",
        file=sys.stderr,
        flush=True,
    )

def keep_environment_mirror() -> Path | None:
    """Save ``$GENDERSCOPE_DATA_MIRROR`` as the setting when it names a mirror folder and nothing is saved
    yet (``make demo`` sets the variable; the Quickstart's next commands run in a plain shell); returns
    the folder saved, else None."""
    env = os.environ.get(MIRROR_ENV, "").strip()
    if not env or read_config().get(MIRROR_KEY):
        return None
    folder = Path(env).expanduser().resolve()
    if not (folder / MIRROR_MANIFEST).is_file():
        return None
    try:
        write_setting(MIRROR_KEY, str(folder))
    except OSError:
        return None
    return folder


def data_mirror() -> Path | None:
    """The data mirror folder in effect, or None."""
    return mirror_setting().path


def save_mirror(path: str | Path | None) -> Path:
    """Save ``path`` (made absolute) as the data mirror in the config file, or remove the setting (None).

    Returns the config file.  A path that is not a folder, or a folder without :data:`MIRROR_MANIFEST`, is a
    usage error (every later run would fail on it).
    """
    if path is None:
        return write_setting(MIRROR_KEY, None)
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such folder (the mirror is a folder laid out like shared/data)")
    if not (folder / MIRROR_MANIFEST).is_file():
        raise UsageError(
            f"{folder}: not a dataset mirror (it holds no {MIRROR_MANIFEST}); give the folder laid out "
            "like shared/data, e.g. `genderscope data mirror ../shared/data`"
        )
    return write_setting(MIRROR_KEY, str(folder))
