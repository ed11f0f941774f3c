# OpenAI Codex CLI — npm package @openai/codex.
[profile]
description = OpenAI Codex CLI
commands = codex
toolchains = git;node

[paths]
ro = ~/.npm-global/lib/node_modules/@openai/codex
rw = ~/.codex
create = ~/.codex
# config.toml names MCP servers and commands the host will run; AGENTS.md is
# what the host's codex follows in every project.
ro-inside = ~/.codex/config.toml;~/.codex/prompts;~/.codex/AGENTS.md

[env]
allow = OPENAI_*;CODEX_*

[net]
# Each host and why: docs/profiles.md. Telemetry that takes uploads is left out.
allow = api.openai.com;auth.openai.com;chatgpt.com
