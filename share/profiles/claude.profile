# Claude Code — npm package @anthropic-ai/claude-code or ~/.local/bin/claude.
[profile]
description = Claude Code (Anthropic)
commands = claude
toolchains = git;node

[paths]
# The native installer's binary and versions; the host runs them later.
ro = ~/.local/bin/claude;~/.local/share/claude;~/.npm-global/lib/node_modules/@anthropic-ai/claude-code
# Sessions, todos, statsig and the credentials store Claude Code keeps in ~/.claude.
rw = ~/.claude;~/.claude.json
create = ~/.claude
# Inside ~/.claude, what the host obeys stays read-only: hooks and permissions
# live in settings.json, commands/agents/plugins are code the host runs.
ro-inside = ~/.claude/settings.json;~/.claude/settings.local.json;~/.claude/commands;~/.claude/agents;~/.claude/plugins;~/.claude/hooks

[env]
allow = ANTHROPIC_*;CLAUDE_*;DISABLE_AUTOUPDATER

[net]
# Each host and why: docs/profiles.md. Telemetry that takes uploads is left out.
allow = api.anthropic.com;platform.claude.com;console.anthropic.com
