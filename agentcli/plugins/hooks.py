"""The enabled plugins' hooks, as the session's other hooks are (`hooks.config`), each knowing its plugin.

A plugin's `hooks/hooks.json` is read as a settings file's `hooks` is, leniently: an entry that
cannot be used is left out with a notice (a PreToolUse one leaves a guard asking about the calls
it could have refused), and the file's other hooks and the plugin's other parts still load. Each
hook runs with `CLAUDE_PLUGIN_ROOT` set to its plugin's folder (`hooks.runner`) and is shown as
`plugin NAME@MKT` in /hooks. They need no further trust: the user said yes to them when they
installed or enabled the plugin, which listed every command it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agentcli.hooks.config import HookCommand, HookConfig, hooks_of
from agentcli.plugins.manifest import Plugin

SCOPE = "plugin"


def plugin_hooks(plugins: Sequence[Plugin]) -> HookConfig:
    commands: list[HookCommand] = []
    notices: list[str] = []
    guards: list[HookCommand] = []
    for plugin in plugins:
        for path, value in plugin.hooks:
            loaded = hooks_of(dict(value), SCOPE, path, f"{path} ({plugin.label})")
            commands.extend(replace(hook, plugin_root=plugin.root, origin=plugin.label) for hook in loaded.commands)
            guards.extend(replace(guard, origin=plugin.label) for guard in loaded.guards)
            notices.extend(loaded.notices)
    return HookConfig(tuple(commands), tuple(notices), tuple(guards))
