"""The config file and the data-mirror setting, defined in :mod:`genderscope.common.config` (a leaf
that ``data`` imports too) and re-exported here."""

from __future__ import annotations

from genderscope.common.config import (
    CONFIG_FILE,
    DEFAULT_MIRROR,
    MIRROR_ENV,
    MIRROR_KEY,
    MirrorSetting,
    config_path,
    data_mirror,
    mirror_setting,
    read_config,
    save_mirror,
    write_setting,
)

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_MIRROR",
    "MIRROR_ENV",
    "MIRROR_KEY",
    "MirrorSetting",
    "config_path",
    "data_mirror",
    "mirror_setting",
    "read_config",
    "save_mirror",
    "write_setting",
]
