"""The checkpoint settings: on or off, the size limit, how long old sessions' checkpoints stay."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentcli.bounds import Range
from agentcli.checkpoints.shadow import ShadowRepo, shadow_folder
from agentcli.checkpoints.store import CheckpointStore
from agentcli.errors import UsageError
from agentcli.setting_keys import setting
from agentcli.settings import Settings

ENABLED_SETTING = setting("checkpoints")
MAX_FILE_SETTING = setting("checkpointMaxFileSizeMB")
CLEANUP_SETTING = setting("cleanupPeriodDays")
MEGABYTES = Range("megabytes", 100_000, positive=True)
DAYS = Range("days", 36_500, low=1, whole=True)
DEFAULT_MAX_FILE_MB = 10
DEFAULT_CLEANUP_DAYS = 30


@dataclass(frozen=True)
class CheckpointConfig:
    enabled: bool = True
    max_file_bytes: int = DEFAULT_MAX_FILE_MB * 1_000_000
    cleanup_days: int = DEFAULT_CLEANUP_DAYS

    @classmethod
    def from_settings(cls, settings: Settings) -> CheckpointConfig:
        """The settings' values; UsageError naming the key for a malformed one."""
        enabled = settings.get(ENABLED_SETTING, True)
        if not isinstance(enabled, bool):
            raise UsageError(f"Setting checkpoints must be true or false, not {enabled!r}.")
        megabytes = MEGABYTES.checked(
            settings.get(MAX_FILE_SETTING, DEFAULT_MAX_FILE_MB), "Setting checkpointMaxFileSizeMB"
        )
        days = DAYS.checked(settings.get(CLEANUP_SETTING, DEFAULT_CLEANUP_DAYS), "Setting cleanupPeriodDays")
        return cls(enabled, int(megabytes * 1_000_000), int(days))

    def store(self, root: Path, home: Path) -> CheckpointStore:
        """The checkpoints of the project at `root`, kept under `home` ($AGENTCLI_HOME)."""
        return CheckpointStore(ShadowRepo(root, shadow_folder(root, home), self.max_file_bytes))
