# GitHub Copilot CLI — npm package @github/copilot.
[profile]
description = GitHub Copilot CLI
commands = copilot
toolchains = git;node

[paths]
ro = ~/.npm-global/lib/node_modules/@github/copilot
rw = ~/.copilot
create = ~/.copilot
ro-inside = ~/.copilot/config.json;~/.copilot/mcp-config.json

[env]
allow = GH_TOKEN;GITHUB_TOKEN;COPILOT_*

[net]
# Each host and why: docs/profiles.md. Telemetry that takes uploads is left out.
allow = github.com;api.github.com;api.githubcopilot.com;api.individual.githubcopilot.com;api.business.githubcopilot.com;api.enterprise.githubcopilot.com
