# Google Gemini CLI — npm package @google/gemini-cli.
[profile]
description = Google Gemini CLI
commands = gemini
toolchains = git;node

[paths]
ro = ~/.npm-global/lib/node_modules/@google/gemini-cli
rw = ~/.gemini
create = ~/.gemini
# settings.json names MCP servers; extensions and commands are code and prompts
# the host runs; GEMINI.md what it follows in every project; policies/ allows
# tools and commands to run unasked; agents/ and skills/ are prompts and
# scripts; trustedFolders.json decides which projects' own settings it obeys.
ro-inside = ~/.gemini/settings.json;~/.gemini/extensions;~/.gemini/commands;~/.gemini/GEMINI.md;~/.gemini/policies;~/.gemini/agents;~/.gemini/skills;~/.gemini/trustedFolders.json
# history/ holds a shadow git repository per project for checkpoints, and the
# .gitconfig its git commands take as their global config (GIT_CONFIG_GLOBAL):
# a live host session would run what that file names. The run checkpoints
# into an empty directory of its own.
tmpfs = ~/.gemini/history

[env]
allow = GEMINI_API_KEY;GOOGLE_API_KEY;GOOGLE_CLOUD_PROJECT;GOOGLE_GENAI_USE_VERTEXAI

[net]
# Each host and why: docs/profiles.md. Telemetry that takes uploads is left out.
allow = generativelanguage.googleapis.com;cloudcode-pa.googleapis.com;oauth2.googleapis.com

[keys]
# Bound when their value exists: a sentinel inside, the real value put in by
# the proxy as x-goog-api-key or ?key= (docs/network.md "Keys"). Vertex AI
# (GOOGLE_GENAI_USE_VERTEXAI) talks to other hosts: see docs/profiles.md.
bind = GEMINI_API_KEY@generativelanguage.googleapis.com:as=x-goog-api-key,query;GOOGLE_API_KEY@generativelanguage.googleapis.com:as=x-goog-api-key,query
# "Login with Google" (docs/network.md, "Keys in files"): the access token for
# the Code Assist API at cloudcode-pa.googleapis.com; the refresh and id
# tokens concealed.
file = ~/.gemini/oauth_creds.json:access_token@cloudcode-pa.googleapis.com:as=bearer;~/.gemini/oauth_creds.json:refresh_token;~/.gemini/oauth_creds.json:id_token
