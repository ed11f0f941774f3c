# GitHub Copilot CLI — npm package @github/copilot.
[profile]
description = GitHub Copilot CLI
commands = copilot
toolchains = git;node

[paths]
ro = ~/.npm-global/lib/node_modules/@github/copilot
rw = ~/.copilot
create = ~/.copilot
# config.json holds the trusted folders, mcp-config.json the MCP servers the host
# starts, hooks/ the commands it runs at session and tool events; agents/,
# skills/ and copilot-instructions.md are what it follows and runs in every
# session.
ro-inside = ~/.copilot/config.json;~/.copilot/mcp-config.json;~/.copilot/hooks;~/.copilot/agents;~/.copilot/skills;~/.copilot/copilot-instructions.md
# pkg/ is where Copilot CLI unpacks and auto-updates itself: the host runs the
# newest version it finds there. The run unpacks into an empty one of its own.
tmpfs = ~/.copilot/pkg

[env]
allow = GH_TOKEN;GITHUB_TOKEN;COPILOT_*

[net]
# Each host and why: docs/profiles.md. Telemetry that takes uploads is left out.
allow = github.com;api.github.com;api.githubcopilot.com;api.individual.githubcopilot.com;api.business.githubcopilot.com;api.enterprise.githubcopilot.com
