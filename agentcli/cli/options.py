"""The command line's options, declared once.

Both parsers read this table: typer (`agentcli.cli.app`) builds `agentcli` and `agentcli run`
from it, for `--help` and for everything out of the ordinary, and the light parser
(`agentcli.cli.argv`) reads the plain calls of the REPL, `-p` and `run` with it without
loading typer (nor the pydantic it brings: ~0.1 s). An option added here reaches both.

`name` is the option's key in the values a command receives. What an option takes:

- `flag`: nothing; True when given (default False);
- `text`: a string (`--model NAME`, `--model=NAME`, `-rID`); the last one given counts;
- `number`: a whole number of at least `minimum` and at most `maximum`; the last one given counts;
- `amount`: a decimal number of at least 0 (`2.5`) and at most `maximum`; the last one given counts;
- `texts`: a string each time it is given (`--allowed-tools A --allowed-tools B` is both);
- `help`, `version`: answered at once, whatever else the command line says (typer's eager options).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from agentcli.bounds import MAX_TOKENS, MAX_TURNS_LIMIT, MAX_USD

Takes = Literal["flag", "text", "number", "amount", "texts", "help", "version"]


class CliOption(NamedTuple):
    name: str
    flags: tuple[str, ...]
    takes: Takes
    help: str
    metavar: str | None = None
    default: str | None = None
    """For `text`: the value when the option is not given (otherwise None)."""
    minimum: int | None = None
    maximum: int | None = None
    """For `number` and `amount`: the largest value taken (`agentcli.bounds`)."""


class CliCommand(NamedTuple):
    """`agentcli` itself (`name` None) or one of its subcommands."""

    name: str | None
    options: tuple[CliOption, ...]
    argument: str | None = None
    """The key of the command's one optional positional argument, if it takes one."""
    argument_metavar: str = ""
    argument_help: str = ""


OUTPUT_FORMATS = ("text", "json", "stream-json")
INPUT_FORMATS = ("text", "stream-json")
PERMISSION_MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")

PRINT = CliOption(
    "print_prompt", ("-p", "--print"), "text", "Run PROMPT once and print the answer (like `run`).", "PROMPT"
)
MODEL = CliOption(
    "model", ("--model",), "text", "Model name (default: $AGENTCLI_MODEL, settings, or claude-sonnet-5-5).", "NAME"
)
PROVIDER = CliOption(
    "provider",
    ("--provider",),
    "text",
    "anthropic, openai, ollama or gemini (default: $AGENTCLI_PROVIDER, settings, or anthropic; "
    "a model prefix such as openai:MODEL wins).",
    "NAME",
)
PERMISSION_MODE = CliOption(
    "permission_mode", ("--permission-mode",), "text", f"One of: {', '.join(PERMISSION_MODES)}.", "MODE"
)
ALLOWED_TOOLS = CliOption(
    "allowed_tools", ("--allowed-tools",), "texts", 'Rules to allow, e.g. "Read,Bash(git status:*)".', "RULES"
)
DISALLOWED_TOOLS = CliOption("disallowed_tools", ("--disallowed-tools",), "texts", "Rules to deny.", "RULES")
APPEND_SYSTEM_PROMPT = CliOption(
    "append_system_prompt", ("--append-system-prompt",), "text", "Text added at the end of the system prompt.", "TEXT"
)
MAX_TURNS = CliOption(
    "max_turns",
    ("--max-turns",),
    "number",
    "Stop (exit 1) after this many model turns.",
    "N",
    minimum=1,
    maximum=MAX_TURNS_LIMIT,
)
OUTPUT_FORMAT = CliOption(
    "output_format", ("--output-format",), "text", "text, json or stream-json.", "FORMAT", default="text"
)
INPUT_FORMAT = CliOption(
    "input_format",
    ("--input-format",),
    "text",
    "text, or stream-json: one JSON user message per line on stdin, all in one session.",
    "FORMAT",
    default="text",
)
PERMISSION_PROMPT_TOOL = CliOption(
    "permission_prompt_tool",
    ("--permission-prompt-tool",),
    "text",
    "An MCP tool (mcp__server__tool) that answers what a run would ask the user.",
    "TOOL",
)
MAX_BUDGET_TOKENS = CliOption(
    "max_budget_tokens",
    ("--max-budget-tokens",),
    "number",
    "Stop after this many tokens (default 10M).",
    "N",
    minimum=1,
    maximum=MAX_TOKENS,
)
MAX_BUDGET_USD = CliOption(
    "max_budget_usd",
    ("--max-budget-usd",),
    "amount",
    "Stop (exit 1) once the run has spent more than this many dollars.",
    "USD",
    minimum=0,
    maximum=MAX_USD,
)
TOOL_PROTOCOL = CliOption(
    "tool_protocol",
    ("--tool-protocol",),
    "text",
    "How the model calls tools: native (the API's tool calls), xml (tags in the text) or auto.",
    "PROTOCOL",
)
VERBOSE = CliOption("verbose", ("--verbose",), "flag", "Show details, including tracebacks.")
CONTINUE = CliOption(
    "continue_session", ("--continue", "-c"), "flag", "Continue the most recent conversation in this directory."
)
RESUME = CliOption("resume", ("--resume", "-r"), "text", "Resume the conversation with this session id.", "ID")
MCP_CONFIG = CliOption(
    "mcp_config", ("--mcp-config",), "texts", 'MCP servers from FILE ({"mcpServers": ...}); repeatable.', "FILE"
)
STRICT_MCP_CONFIG = CliOption(
    "strict_mcp_config", ("--strict-mcp-config",), "flag", "Only the --mcp-config servers (no .mcp.json, no user ones)."
)
PLUGIN_DIR = CliOption(
    "plugin_dirs",
    ("--plugin-dir",),
    "texts",
    "Load the plugin in DIR for this session, without installing it; repeatable.",
    "DIR",
)
SANDBOX = CliOption(
    "sandbox", ("--sandbox",), "flag", "Run the agent's commands in the sandbox (bubblewrap) for this session."
)
NO_SANDBOX = CliOption(
    "no_sandbox", ("--no-sandbox",), "flag", "Run the agent's commands without the sandbox for this session."
)
TRUST_PROJECT_HOOKS = CliOption(
    "trust_project_hooks",
    ("--trust-project-hooks",),
    "flag",
    "Run the hooks of the project's checked-in .agentcli/settings.json without asking.",
)
VERSION = CliOption("version", ("--version", "-v"), "version", "Show the version.")
HELP = CliOption("help_", ("--help", "-h"), "help", "Show this message and exit.")

RUN_OPTIONS = (
    MODEL,
    PROVIDER,
    PERMISSION_MODE,
    ALLOWED_TOOLS,
    DISALLOWED_TOOLS,
    APPEND_SYSTEM_PROMPT,
    MAX_TURNS,
    OUTPUT_FORMAT,
    INPUT_FORMAT,
    PERMISSION_PROMPT_TOOL,
    MAX_BUDGET_TOKENS,
    MAX_BUDGET_USD,
    TOOL_PROTOCOL,
    VERBOSE,
    CONTINUE,
    RESUME,
    MCP_CONFIG,
    STRICT_MCP_CONFIG,
    PLUGIN_DIR,
    SANDBOX,
    NO_SANDBOX,
    TRUST_PROJECT_HOOKS,
)
MAIN = CliCommand(None, (PRINT, *RUN_OPTIONS, VERSION, HELP))
RUN = CliCommand(
    "run",
    (*RUN_OPTIONS, HELP),
    argument="prompt",
    argument_metavar="PROMPT",
    argument_help="The prompt; `-` or a pipe reads it from stdin.",
)
ACP = CliCommand(
    "acp",
    tuple(
        option
        for option in (*RUN_OPTIONS, HELP)
        if option not in (OUTPUT_FORMAT, INPUT_FORMAT, PERMISSION_PROMPT_TOOL, CONTINUE, RESUME)
    ),
)
"""`agentcli acp`: the editor chooses the sessions (`session/new`, `session/load`), not the command line."""
SUBCOMMANDS = {RUN.name: RUN, ACP.name: ACP}
"""The subcommands the light parser reads (the fast path); the others are typer's alone."""

STATS = CliCommand(
    "stats",
    (
        CliOption("all_projects", ("--all",), "flag", "Every project's sessions, not just this one's."),
        CliOption(
            "since", ("--since",), "text", "Only what was recorded since then: 7d, 24h, 30m, 2w or a date.", "WHEN"
        ),
        CliOption("json", ("--json",), "flag", "Print the figures as one JSON object."),
        HELP,
    ),
    argument="folder",
    argument_metavar="[DIR]",
    argument_help="A batch's folder (agentcli batch --out DIR): the figures of its tasks' sessions.",
)

RAY_LOCAL = "local"
"""`--ray` given alone: a Ray cluster started on this machine (`agentcli.cli.app.BatchCommand`)."""
WORKERS_LIMIT = 256
RETRIES_LIMIT = 10
NOT_FOR_A_BATCH = (OUTPUT_FORMAT, MAX_BUDGET_USD, VERBOSE, CONTINUE, RESUME)
"""`run`'s options a batch does not take (it has a budget of its own and its own output)."""
BATCH = CliCommand(
    "batch",
    (
        CliOption("out", ("--out",), "text", "The batch's folder: results.jsonl, tasks/ID/ (required).", "DIR"),
        CliOption(
            "workers",
            ("--workers",),
            "number",
            "Tasks run at once on this machine (default: 2 per CPU, at most 8).",
            "N",
            minimum=1,
            maximum=WORKERS_LIMIT,
        ),
        CliOption(
            "ray",
            ("--ray",),
            "text",
            "Run the tasks on a Ray cluster: ADDRESS (host:port, auto), or alone a local one "
            "(pip install 'agentcli[ray]').",
            "ADDRESS",
        ),
        CliOption(
            "max_budget_usd",
            ("--max-budget-usd",),
            "amount",
            "Start no more tasks once the batch has spent this many dollars.",
            "USD",
            minimum=0,
            maximum=MAX_USD,
        ),
        CliOption(
            "task_budget_usd",
            ("--task-budget-usd",),
            "amount",
            "Stop a task once it has spent this many dollars (status budget).",
            "USD",
            minimum=0,
            maximum=MAX_USD,
        ),
        CliOption(
            "retries",
            ("--retries",),
            "number",
            "Run a task again up to N times when it fails for the infrastructure (default 1).",
            "N",
            minimum=0,
            maximum=RETRIES_LIMIT,
        ),
        *(option for option in RUN_OPTIONS if option not in NOT_FOR_A_BATCH),
        HELP,
    ),
    argument="tasks",
    argument_metavar="TASKS",
    argument_help="A JSONL file of tasks, or a folder of Harbor tasks.",
)

REWIND = CliCommand(
    "rewind",
    (
        CliOption("list", ("--list",), "flag", "List the session's turns and the files each changed (the default)."),
        CliOption("to", ("--to",), "text", "Go back to before user turn TURN (its files and conversation).", "TURN"),
        CliOption("code", ("--code",), "flag", "With --to: the files only."),
        CliOption("conversation", ("--conversation",), "flag", "With --to: the conversation only."),
        CliOption("undo", ("--undo",), "flag", "Put back the files as they were before the last code rewind."),
        CliOption("force", ("--force",), "flag", "Restore even files changed outside agentcli since then."),
        CliOption("json", ("--json",), "flag", "With --list: one JSON object."),
        CONTINUE,
        RESUME,
        HELP,
    ),
)
