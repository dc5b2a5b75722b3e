"""Every key a settings file may hold: its type, its default and which files may set it.

This is the one list of settings keys. A reader names its key with `setting("name")`, which
raises at import time for a key not declared here, and `Settings.get` reads only declared
keys; `docs/settings.md` lists exactly these keys with this type, default and files (a test
compares them). A key inside an object is written with a dot: `permissions.allow`.

The files (`agentcli.settings.settings_files`): `user` is `$AGENTCLI_HOME/settings.json`
(and Claude Code's `~/.claude/settings.json`), `project` the checked-in `.agentcli/settings.json`
(and `.claude/settings.json`), `local` `.agentcli/settings.local.json` (and
`.claude/settings.local.json`). A key with `own_only` may be set only by the user's own files
(user and local): in a project file it is ignored with a notice saying what it would control,
since a hostile repository controls that file.

Adding a key: declare it here, read it through `setting(...)`, and document it in
docs/settings.md (and on its subject's page).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Scope = Literal["user", "project", "local"]
Shape = Literal["text", "flag", "names", "object"]
"""The JSON a plain key's value must be: a string, true or false, a list of strings, an object."""

EVERY_FILE: tuple[Scope, ...] = ("user", "project", "local")
OWN_FILES: tuple[Scope, ...] = ("user", "local")


@dataclass(frozen=True)
class SettingKey:
    name: str
    type: str
    """What the value must be, as the settings reference shows it."""
    default: str
    """What applies when no file sets it, as the settings reference shows it."""
    scopes: tuple[Scope, ...] = EVERY_FILE
    """The files whose value counts."""
    own_only: str | None = None
    """What the key controls, for the notice when the project file sets it (`settings.OWN_KEYS`)."""
    shape: Shape | None = None
    """Checked as each file is read (a value of another shape is a usage error naming the file);
    None for a key its reader checks more closely."""


SETTING_KEYS: tuple[SettingKey, ...] = (
    SettingKey("permissions.allow", "list of rules", "`[]`"),
    SettingKey("permissions.ask", "list of rules", "`[]`"),
    SettingKey("permissions.deny", "list of rules", "`[]`"),
    SettingKey(
        "permissions.defaultMode", "`default`, `acceptEdits`, `plan`, `dontAsk` or `bypassPermissions`", "`default`"
    ),
    SettingKey("permissions.additionalDirectories", "list of folder paths", "`[]`", OWN_FILES),
    SettingKey("permissions.disableBypassPermissionsMode", '`"disable"`', "none"),
    SettingKey("hooks", "object: event → list of matcher groups", "none"),
    SettingKey("model", "model name, optionally `provider:model`", "the provider's default", shape="text"),
    SettingKey("provider", "`anthropic`, `openai`, `gemini` or `ollama`", "`anthropic`", shape="text"),
    SettingKey("models", "object: model name → fields", "the built-in table"),
    SettingKey("modelAliases", "object: provider → object: alias → model name", "the built-in table"),
    SettingKey("toolProtocol", "`native`, `xml` or `auto`", "`native`"),
    SettingKey("maxBudgetUsd", "number above 0, at most 1,000,000 (dollars)", "none (no dollar budget)"),
    SettingKey("tokenBudget", "whole number from 1 to 1,000,000,000,000 (tokens)", "10,000,000"),
    SettingKey("autoCompactPercent", "number from 1 to 100, or `false`", "80"),
    SettingKey("streamIdleTimeoutSeconds", "number above 0, at most 86,400 (seconds)", "90"),
    SettingKey("idleNotificationSeconds", "number from 0 to 86,400 (seconds)", "60"),
    SettingKey("mcpTimeout", "whole number from 1 to 86,400,000 (milliseconds)", "30,000"),
    SettingKey("maxMcpOutputTokens", "whole number from 1 to 1,000,000,000,000 (tokens)", "25,000"),
    SettingKey("mcpToolTimeout", "whole number from 1 to 86,400,000 (milliseconds)", "600,000 (10 minutes)"),
    SettingKey("mcpToolSearchThreshold", "number from 0 to 100 (percent)", "10"),
    SettingKey("smallFastModel", "model name, optionally `provider:model`", "none (the main model reads pages)"),
    SettingKey("webSearchBackend", "`auto`, `provider`, `searxng`, `brave` or `off`", "`auto`"),
    SettingKey("webSearchMaxUses", "whole number from 1 to 100", "5"),
    SettingKey("webSearchModel", "model name", "the session's model (`gpt-5-search-api` with OpenAI)"),
    SettingKey("searxngUrl", "URL", "none", OWN_FILES, "web searches are sent to this server"),
    SettingKey(
        "subprocessEnvPassthrough",
        "list of environment variable names",
        "`[]`",
        OWN_FILES,
        "credentials are passed to child processes",
    ),
    SettingKey(
        "env",
        "object: variable name → string",
        "`{}`",
        OWN_FILES,
        "environment variables for agentcli and the programs it runs are set",
        "object",
    ),
    SettingKey(
        "apiKeyHelper", "shell command", "none", OWN_FILES, "the command that prints the API key is set", "text"
    ),
    SettingKey("allowedExternalImports", "list of paths", "`[]`", OWN_FILES, "files outside the project are approved"),
    SettingKey("deniedExternalImports", "list of paths", "`[]`", OWN_FILES, "files outside the project are refused"),
    SettingKey(
        "projectHooksTrust",
        '`{"sha256": …, "trusted": true\\|false}`',
        "none (asked in the REPL)",
        OWN_FILES,
        "the project's hooks are trusted to run",
        "object",
    ),
    SettingKey(
        "enableAllProjectHooks",
        "`true` or `false`",
        "`false`",
        OWN_FILES,
        "the project's hooks are trusted to run",
        "flag",
    ),
    SettingKey(
        "enableAllProjectMcpServers",
        "`true` or `false`",
        "`false`",
        OWN_FILES,
        "the project's MCP servers are approved",
        "flag",
    ),
    SettingKey(
        "enabledMcpjsonServers",
        "list of server names",
        "`[]`",
        OWN_FILES,
        "the project's MCP servers are approved",
        "names",
    ),
    SettingKey(
        "enabledMcpjsonServerDigests",
        "object: server name → digest",
        "`{}`",
        OWN_FILES,
        "the project's MCP servers are approved",
        "object",
    ),
    SettingKey("disabledMcpjsonServers", "list of server names", "`[]`", OWN_FILES, shape="names"),
    SettingKey("checkpoints", "`true` or `false`", "`true`", OWN_FILES, "checkpoints are turned off", "flag"),
    SettingKey(
        "checkpointMaxFileSizeMB",
        "number above 0, at most 100,000 (megabytes)",
        "10",
        OWN_FILES,
        "files are left out of checkpoints",
    ),
    SettingKey(
        "cleanupPeriodDays",
        "whole number from 1 to 36,500 (days)",
        "30",
        OWN_FILES,
        "old checkpoints are deleted",
    ),
    SettingKey(
        "enabledPlugins",
        "object: `name@marketplace` → `true` or `false`",
        "`{}`",
        EVERY_FILE,
        shape="object",
    ),
    SettingKey("extraKnownMarketplaces", 'object: marketplace name → `{"source": …}`', "`{}`", shape="object"),
    SettingKey("sandbox.enabled", "`true` or `false`", "`false`"),
    SettingKey("sandbox.autoAllowBashIfSandboxed", "`true` or `false`", "`true`"),
    SettingKey("sandbox.allowUnsandboxedCommands", "`true` or `false`", "`false`"),
    SettingKey("sandbox.failIfUnavailable", "`true` or `false`", "`false`"),
    SettingKey(
        "sandbox.excludedCommands",
        "list of commands (Bash rule patterns)",
        "`[]`",
        OWN_FILES,
        "commands run outside the sandbox",
    ),
    SettingKey(
        "sandbox.network.allowedDomains",
        "list of host names (`*.example.com` for its subdomains)",
        "`[]`",
        OWN_FILES,
        "sandboxed commands reach more hosts",
    ),
    SettingKey(
        "sandbox.network.allowUnixSockets",
        "list of paths",
        "`[]`",
        OWN_FILES,
        "sandboxed commands reach more Unix sockets",
    ),
    SettingKey(
        "sandbox.network.allowAllUnixSockets",
        "`true` or `false`",
        "`false`",
        OWN_FILES,
        "sandboxed commands open Unix sockets",
    ),
    SettingKey("sandbox.filesystem.denyRead", "list of paths", "`[]`"),
    SettingKey("sandbox.filesystem.allowRead", "list of paths", "`[]`", OWN_FILES, "secret places are shown"),
    SettingKey("sandbox.filesystem.allowWrite", "list of paths", "`[]`", OWN_FILES, "more folders are writable"),
    SettingKey("sandbox.filesystem.denyWrite", "list of paths", "`[]`"),
)
"""Every settings key, in the order of the settings reference."""

DECLARED = {key.name: key for key in SETTING_KEYS}
TOP_LEVEL = frozenset(key.name.partition(".")[0] for key in SETTING_KEYS)
"""The keys a settings file's top-level object may hold."""


SHAPES = {key.name: key.shape for key in SETTING_KEYS if key.shape is not None}
"""The plain keys checked as each file is read, and the shape of their values."""


def setting(name: str) -> str:
    """`name`, once checked to be a declared key (a top-level one, or `outer.inner`)."""
    if name not in DECLARED and name not in TOP_LEVEL:
        raise LookupError(f"{name!r} is not a declared settings key: add it to agentcli/setting_keys.py.")
    return name


def keys_inside(outer: str) -> tuple[str, ...]:
    """The declared keys of the object `outer` (`permissions` → allow, ask, deny, defaultMode)."""
    prefix = f"{outer}."
    return tuple(key.name.removeprefix(prefix) for key in SETTING_KEYS if key.name.startswith(prefix))
