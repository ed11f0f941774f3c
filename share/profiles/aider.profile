# aider — pip/pipx package aider-chat.
[profile]
description = aider pair programmer
commands = aider
toolchains = git;python

[paths]
ro = ~/.local/bin/aider;~/.local/share/pipx/venvs/aider-chat;~/.local/pipx/venvs/aider-chat;~/.aider.conf.yml
rw = ~/.aider
create = ~/.aider
# aider loads oauth-keys.env as a dotenv file before it reads its options
# again, so an AIDER_LINT_CMD or AIDER_TEST_CMD there runs on the host.
ro-inside = ~/.aider/oauth-keys.env

[env]
allow = AIDER_*;OPENAI_API_KEY;ANTHROPIC_API_KEY;OPENROUTER_API_KEY;GEMINI_API_KEY;DEEPSEEK_API_KEY

[net]
# Each host and why: docs/profiles.md. Telemetry that takes uploads is left out.
allow = api.openai.com;api.anthropic.com;openrouter.ai;generativelanguage.googleapis.com;api.deepseek.com

[keys]
# Bound when their value exists: a sentinel inside, the real value put in by
# the proxy (docs/network.md "Keys", docs/profiles.md).
bind = OPENAI_API_KEY@api.openai.com;ANTHROPIC_API_KEY@api.anthropic.com:as=x-api-key;OPENROUTER_API_KEY@openrouter.ai;GEMINI_API_KEY@generativelanguage.googleapis.com:as=x-goog-api-key,query;DEEPSEEK_API_KEY@api.deepseek.com
