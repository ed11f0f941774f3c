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
allow = api.github.com;github.com;*.githubcopilot.com;copilot-proxy.githubusercontent.com;registry.npmjs.org
