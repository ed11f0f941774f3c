# Claude Code — npm package @anthropic-ai/claude-code or ~/.local/bin/claude.
[profile]
description = Claude Code (Anthropic)
commands = claude
toolchains = git;node

[paths]
# The native installer's binary and versions; the host runs them later.
ro = ~/.local/bin/claude;~/.local/share/claude;~/.npm-global/lib/node_modules/@anthropic-ai/claude-code
# Sessions, todos, statsig and the credentials store Claude Code keeps in ~/.claude
# (served through a view of its own: the run's rules, the audit log).
rw = ~/.claude
create = ~/.claude
# Inside ~/.claude, what the host obeys stays read-only: hooks and permissions
# live in settings.json, commands/agents/plugins/skills are code or prompts
# the host runs, CLAUDE.md instructions it follows in every project, and any
# script the settings name (a statusLine command) is read-only too; so is
# local/, Claude Code's local install (the host's alias claude=~/.claude/local/claude),
# and rules/, instructions loaded into every session like CLAUDE.md.
ro-inside = ~/.claude/settings.json;~/.claude/settings.local.json;~/.claude/commands;~/.claude/agents;~/.claude/plugins;~/.claude/hooks;~/.claude/skills;~/.claude/output-styles;~/.claude/CLAUDE.md;~/.claude/local;~/.claude/rules
# A live host session sources its shell snapshot, and the env files its
# SessionStart hooks wrote (session-env/, CLAUDE_ENV_FILE), before every
# command: the run gets empty directories of its own for both.
tmpfs = ~/.claude/shell-snapshots;~/.claude/session-env
# ~/.claude.json holds Claude Code's state and also its user-level mcpServers,
# commands the host starts: the run works on a copy, and only these keys go
# back at the end ({project}: the run's project and what is below it).
copy = ~/.claude.json

[copy]
merge = numStartups;tipsHistory;promptQueueUseCount;hasCompletedOnboarding;lastOnboardingVersion;lastReleaseNotesSeen;cachedChangelog;changelogLastFetched;subscriptionNoticeCount;hasAvailableSubscription;memoryUsageCount;projects.{project}.history;projects.{project}.lastCost;projects.{project}.lastAPIDuration;projects.{project}.lastDuration;projects.{project}.lastLinesAdded;projects.{project}.lastLinesRemoved;projects.{project}.lastTotalInputTokens;projects.{project}.lastTotalOutputTokens;projects.{project}.projectOnboardingSeenCount

[env]
allow = ANTHROPIC_*;CLAUDE_*;DISABLE_AUTOUPDATER

[net]
# Each host and why: docs/profiles.md. Telemetry that takes uploads is left out.
allow = api.anthropic.com;platform.claude.com;console.anthropic.com

[keys]
# Bound when their value exists: a sentinel inside, the real value put in by
# the proxy (docs/network.md "Keys"). The API key goes as x-api-key, the
# long-lived token of `claude setup-token` as a bearer. ANTHROPIC_AUTH_TOKEN
# is left out: it is meant for whatever gateway ANTHROPIC_BASE_URL names,
# which a profile cannot know (docs/profiles.md).
bind = ANTHROPIC_API_KEY@api.anthropic.com:as=x-api-key;CLAUDE_CODE_OAUTH_TOKEN@api.anthropic.com
# The subscription login's tokens (docs/network.md, "Keys in files"): inside,
# the file holds sentinels; the proxy puts the real access token into requests
# to api.anthropic.com; the refresh token is concealed (bound to no host).
file = ~/.claude/.credentials.json:claudeAiOauth.accessToken@api.anthropic.com:as=bearer;~/.claude/.credentials.json:claudeAiOauth.refreshToken
