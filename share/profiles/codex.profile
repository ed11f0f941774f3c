# OpenAI Codex CLI — npm package @openai/codex.
[profile]
description = OpenAI Codex CLI
commands = codex
toolchains = git;node

[paths]
ro = ~/.npm-global/lib/node_modules/@openai/codex
rw = ~/.codex
create = ~/.codex
# config.toml names MCP servers and commands the host will run; AGENTS.md (and
# AGENTS.override.md, read instead of it) is what the host's codex follows in
# every project; rules/ holds the execpolicy that lets commands run unasked
# ("always allow" appends there); skills/, plugins/, hooks.json and hooks/ are
# instructions, scripts and commands it runs; memories/ what it recalls in
# every session.
ro-inside = ~/.codex/config.toml;~/.codex/prompts;~/.codex/AGENTS.md;~/.codex/AGENTS.override.md;~/.codex/rules;~/.codex/skills;~/.codex/hooks.json;~/.codex/hooks;~/.codex/plugins;~/.codex/memories

[env]
allow = OPENAI_*;CODEX_*

[net]
# Each host and why: docs/profiles.md. Telemetry that takes uploads is left out.
# Not auth.openai.com: sign-in and refresh happen on the host, and the
# id_token left real in auth.json would be exchangeable there for an API key.
allow = api.openai.com;chatgpt.com

[keys]
# Bound when their value exists: a sentinel inside, the real value put in by
# the proxy as a bearer (docs/network.md "Keys"). A login's keys are in
# ~/.codex/auth.json instead: `file` below.
bind = OPENAI_API_KEY@api.openai.com;CODEX_API_KEY@api.openai.com
# auth.json (docs/network.md, "Keys in files"): an API key login's key for
# api.openai.com; a ChatGPT login's access token for chatgpt.com/backend-api
# (codex's base URL for that login); the refresh token concealed. The
# id_token stays as it is: codex decodes its claims (the plan) itself.
file = ~/.codex/auth.json:OPENAI_API_KEY@api.openai.com:as=bearer;~/.codex/auth.json:tokens.access_token@chatgpt.com:as=bearer:paths=/backend-api/*;~/.codex/auth.json:tokens.refresh_token
