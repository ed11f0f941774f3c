# OpenCode (https://opencode.ai) — npm package opencode-ai or the install script.
[profile]
description = OpenCode coding agent
commands = opencode
toolchains = git;node

[paths]
# The binary and its self-updating install directory: the host runs them later.
ro = ~/.opencode/bin;~/.npm-global/lib/node_modules/opencode-ai;~/.config/opencode/opencode.json;~/.config/opencode/opencode.jsonc;~/.config/opencode/plugin;~/.config/opencode/agent;~/.config/opencode/command
# Sessions, its database and logs: what opencode writes while it works (each
# served through a view of its own: the run's rules, the audit log).
rw = ~/.local/share/opencode;~/.local/state/opencode
# Except bin/: the rg and language servers opencode downloads there and the
# host's opencode runs. Created so that opencode's own mkdir of it at start
# finds it (it creates these itself on first start).
ro-inside = ~/.local/share/opencode/bin
create = ~/.local/share/opencode;~/.local/state/opencode;~/.local/share/opencode/bin;~/.cache/opencode
# Its cache holds code the host's opencode runs (node_modules of providers and
# plugins it imports): the run gets an empty one of its own, and
# opencode installs there what it needs (from registry.npmjs.org).
tmpfs = ~/.cache/opencode

[env]
allow = OPENCODE_*;ANTHROPIC_API_KEY;OPENAI_API_KEY;OPENROUTER_API_KEY;GEMINI_API_KEY;GOOGLE_GENERATIVE_AI_API_KEY;GROQ_API_KEY;XAI_API_KEY;DEEPSEEK_API_KEY

[net]
# Each host and why: docs/profiles.md. Telemetry that takes uploads is left out.
allow = opencode.ai;models.opencode.ai;models.dev;registry.npmjs.org;api.anthropic.com;api.openai.com;openrouter.ai;generativelanguage.googleapis.com;api.groq.com;api.x.ai;api.deepseek.com

[keys]
# Bound when their value exists (--env-file, the environment): inside, each
# holds a sentinel, and the proxy puts the real value into requests to its
# host at its place (docs/network.md "Keys"; each provider's header:
# docs/profiles.md).
bind = ANTHROPIC_API_KEY@api.anthropic.com:as=x-api-key;OPENAI_API_KEY@api.openai.com;OPENROUTER_API_KEY@openrouter.ai;GEMINI_API_KEY@generativelanguage.googleapis.com:as=x-goog-api-key,query;GOOGLE_GENERATIVE_AI_API_KEY@generativelanguage.googleapis.com:as=x-goog-api-key,query;GROQ_API_KEY@api.groq.com;XAI_API_KEY@api.x.ai;DEEPSEEK_API_KEY@api.deepseek.com
# auth.json (`opencode auth login`; docs/network.md "Keys in files"): each
# provider's API key ({"type": "api", "key"}) bound to its host at its
# place; Anthropic's OAuth login's access token to api.anthropic.com as a
# bearer; every refresh token, the access tokens of logins whose API
# host this profile does not allow (OpenAI's ChatGPT login, GitHub
# Copilot), and the API keys of the other providers opencode knows
# (models.dev ids: their hosts are not allowed here), concealed: a
# sentinel inside, never put in. A provider not named here is as it is.
file = ~/.local/share/opencode/auth.json:openai.key@api.openai.com;~/.local/share/opencode/auth.json:anthropic.key@api.anthropic.com:as=x-api-key;~/.local/share/opencode/auth.json:anthropic.access@api.anthropic.com;~/.local/share/opencode/auth.json:anthropic.refresh;~/.local/share/opencode/auth.json:openai.access;~/.local/share/opencode/auth.json:openai.refresh;~/.local/share/opencode/auth.json:openrouter.key@openrouter.ai;~/.local/share/opencode/auth.json:google.key@generativelanguage.googleapis.com:as=x-goog-api-key,query;~/.local/share/opencode/auth.json:groq.key@api.groq.com;~/.local/share/opencode/auth.json:xai.key@api.x.ai;~/.local/share/opencode/auth.json:deepseek.key@api.deepseek.com;~/.local/share/opencode/auth.json:opencode.key@opencode.ai;~/.local/share/opencode/auth.json:github-copilot.access;~/.local/share/opencode/auth.json:github-copilot.refresh;~/.local/share/opencode/auth.json:mistral.key;~/.local/share/opencode/auth.json:cohere.key;~/.local/share/opencode/auth.json:togetherai.key;~/.local/share/opencode/auth.json:fireworks-ai.key;~/.local/share/opencode/auth.json:cerebras.key;~/.local/share/opencode/auth.json:deepinfra.key;~/.local/share/opencode/auth.json:huggingface.key;~/.local/share/opencode/auth.json:perplexity.key;~/.local/share/opencode/auth.json:azure.key;~/.local/share/opencode/auth.json:vercel.key;~/.local/share/opencode/auth.json:moonshotai.key;~/.local/share/opencode/auth.json:zhipuai.key;~/.local/share/opencode/auth.json:alibaba.key;~/.local/share/opencode/auth.json:nvidia.key;~/.local/share/opencode/auth.json:venice.key;~/.local/share/opencode/auth.json:baseten.key;~/.local/share/opencode/auth.json:chutes.key;~/.local/share/opencode/auth.json:inception.key;~/.local/share/opencode/auth.json:upstage.key;~/.local/share/opencode/auth.json:requesty.key;~/.local/share/opencode/auth.json:scaleway.key;~/.local/share/opencode/auth.json:sambanova.key;~/.local/share/opencode/auth.json:llama.key;~/.local/share/opencode/auth.json:morph.key;~/.local/share/opencode/auth.json:v0.key;~/.local/share/opencode/auth.json:cloudflare-workers-ai.key;~/.local/share/opencode/auth.json:amazon-bedrock.key;~/.local/share/opencode/auth.json:google-vertex.key
