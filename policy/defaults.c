/* policy/defaults.c — the built-in rules. Each says why it exists; `vault-run
 * policy show` prints them with their number as "built-in:N". Order matters
 * (last match wins among these and the user's rules): the SHOW rules for
 * templates follow the ".env.*" rule they carve out of. */
#include "policy/policy-private.h"

static const struct {
	VrRuleKind kind;
	const char *pattern;
	const char *why;
} builtins[] = {
	/* ---- secrets: hidden ---- */
	{VR_RULE_HIDE, ".env", "dotenv files hold API keys and database passwords"},
	{VR_RULE_HIDE, ".env.*", "per-environment dotenv files (.env.local, .env.production)"},
	{VR_RULE_SHOW, ".env.example", "a template without values; agents need it to know the variables"},
	{VR_RULE_SHOW, ".env.sample", "a template without values, like .env.example"},
	{VR_RULE_SHOW, ".env.template", "a template without values, like .env.example"},
	{VR_RULE_HIDE, "*.pem", "TLS/SSH private keys and certificates with keys"},
	{VR_RULE_HIDE, "*.key", "private keys"},
	{VR_RULE_HIDE, "id_rsa*", "SSH private key (and its .pub, which identifies the user)"},
	{VR_RULE_HIDE, "id_ed25519*", "SSH private key"},
	{VR_RULE_HIDE, "id_ecdsa*", "SSH private key"},
	{VR_RULE_HIDE, "id_dsa*", "SSH private key"},
	{VR_RULE_HIDE, "*.p12", "PKCS#12 key stores"},
	{VR_RULE_HIDE, "*.pfx", "PKCS#12 key stores (Windows name)"},
	{VR_RULE_HIDE, "*.jks", "Java key stores"},
	{VR_RULE_HIDE, "*.kdbx", "KeePass password databases"},
	{VR_RULE_HIDE, ".netrc", "machine/login/password triples for curl, ftp, git"},
	{VR_RULE_HIDE, ".npmrc", "npm registry auth tokens"},
	{VR_RULE_HIDE, ".pypirc", "PyPI upload credentials"},
	{VR_RULE_HIDE, ".git-credentials", "git credential-store plain-text passwords"},
	{VR_RULE_HIDE, "credentials.json", "Google/GCP service account and OAuth client secrets"},
	{VR_RULE_HIDE, ".aws/", "AWS access keys (credentials, config with SSO tokens)"},
	{VR_RULE_HIDE, ".ssh/", "SSH keys, known hosts, agent config"},
	{VR_RULE_HIDE, ".gnupg/", "GnuPG private keys"},
	{VR_RULE_HIDE, "**/.docker/config.json", "registry auth tokens"},
	{VR_RULE_HIDE, "**/.kube/config", "Kubernetes cluster credentials"},
	{VR_RULE_HIDE, "*.tfstate*", "Terraform state holds every resource secret in clear"},
	{VR_RULE_HIDE, "*.tfvars", "Terraform variables, often passwords and tokens"},
	{VR_RULE_HIDE, ".pgpass", "PostgreSQL passwords"},
	{VR_RULE_HIDE, ".yarnrc.yml", "yarn registry auth tokens"},
	{VR_RULE_HIDE, "secrets.*", "secrets.yaml/json/toml: named for what they hold"},
	{VR_RULE_HIDE, ".htpasswd", "HTTP basic-auth password hashes"},
	{VR_RULE_HIDE, "**/.config/vault-run/", "vault-run's own config (with --project ~): the agent must not read or rewrite its rules"},
	{VR_RULE_HIDE, "**/.local/state/vault-run/", "vault-run's audit logs (with --project ~): the agent must not read or forge them"},

	/* ---- persistence vectors: read-only (things the host later executes or obeys) ---- */
	{VR_RULE_READONLY, "**/.git/hooks/", "git runs these on the host at the next commit/checkout"},
	{VR_RULE_READONLY, "**/.git/commondir", "redirects git to another repository's config and hooks"},
	{VR_RULE_READONLY, "**/.git/info/attributes", "selects filter/diff drivers that run commands"},
	{VR_RULE_READONLY, "**/.git/modules/**/hooks/", "submodule hooks, run by git on the host"},
	{VR_RULE_READONLY, "**/.hg/hgrc", "Mercurial repository config: [hooks] run on the host at the next hg command"},
	{VR_RULE_READONLY, ".husky/", "husky git hooks, run at the next commit"},
	{VR_RULE_READONLY, ".githooks/", "git hooks directory commonly set as core.hooksPath"},
	{VR_RULE_READONLY, ".pre-commit-config.yaml", "pre-commit runs what it names at the next commit"},
	{VR_RULE_READONLY, "/lefthook.*", "lefthook runs the commands it lists at the next commit (lefthook.yml, .yaml, .json, .toml)"},
	{VR_RULE_READONLY, "/.lefthook.*", "lefthook config, dot-file form"},
	{VR_RULE_READONLY, "/lefthook-local.*", "lefthook's local overrides: same power as lefthook.yml"},
	{VR_RULE_READONLY, "/.lefthook-local.*", "lefthook's local overrides, dot-file form"},
	{VR_RULE_READONLY, "/.config/lefthook.*", "lefthook config in .config/"},
	{VR_RULE_READONLY, "/.lefthook/", "lefthook's script directory: run by the hooks it defines"},
	{VR_RULE_READONLY, "/.lefthook-local/", "lefthook's local script directory"},
	{VR_RULE_READONLY, "/.overcommit.yml", "overcommit runs the hooks it configures at the next commit"},
	{VR_RULE_READONLY, "/.simple-git-hooks.*", "simple-git-hooks: the commands it installs as git hooks"},
	{VR_RULE_READONLY, "/simple-git-hooks.*", "simple-git-hooks config, plain-name form"},
	{VR_RULE_READONLY, ".envrc", "direnv executes it when the user enters the directory"},
	{VR_RULE_READONLY, ".vscode/", "tasks, launch configs and settings that run commands in the editor"},
	{VR_RULE_READONLY, ".idea/", "JetBrains run configurations and tool settings"},
	{VR_RULE_READONLY, ".devcontainer/", "container definitions and lifecycle commands run by the editor"},
	{VR_RULE_READONLY, ".devcontainer.json", "dev container definition: initializeCommand runs on the host"},
	{VR_RULE_READONLY, "*.code-workspace", "VS Code workspace file: tasks, launch configs and settings like .vscode/"},
	{VR_RULE_READONLY, ".zed/", "Zed tasks and settings (language servers, context servers) that run commands"},
	{VR_RULE_READONLY, ".fleet/", "JetBrains Fleet run configurations and settings"},
	{VR_RULE_READONLY, "/.run/*.run.xml", "JetBrains shared run configurations"},
	{VR_RULE_READONLY, ".nvim.lua", "Neovim runs it on start in the directory ('exrc')"},
	{VR_RULE_READONLY, ".nvimrc", "Neovim/Vim local config run with 'exrc'"},
	{VR_RULE_READONLY, ".exrc", "Vim/ex local config run with 'exrc'"},
	{VR_RULE_READONLY, ".lvimrc", "Vim localvimrc plugin: sourced on entering the directory"},
	{VR_RULE_READONLY, ".dir-locals.el", "Emacs directory variables (eval: forms)"},
	{VR_RULE_READONLY, ".dir-locals-2.el", "Emacs directory variables, second file"},
	{VR_RULE_READONLY, ".mcp.json", "MCP server definitions: commands an agent harness launches"},
	{VR_RULE_READONLY, "**/.claude/commands/", "Claude Code custom commands (prompts with tool permissions)"},
	{VR_RULE_READONLY, "**/.claude/agents/", "Claude Code sub-agent definitions"},
	{VR_RULE_READONLY, "**/.claude/settings*.json", "Claude Code hooks and permission allow-lists"},
	{VR_RULE_READONLY, "**/.claude/hooks/", "scripts Claude Code hooks run on the host"},
	{VR_RULE_READONLY, "**/.claude/skills/", "Claude Code skills: instructions and the scripts they run"},
	{VR_RULE_READONLY, "**/.gemini/settings.json", "Gemini CLI settings: MCP servers, tool commands, hooks"},
	{VR_RULE_READONLY, "**/.gemini/commands/", "Gemini CLI custom commands (shell injections)"},
	{VR_RULE_READONLY, "**/.gemini/extensions/", "Gemini CLI extensions: MCP servers it launches"},
	{VR_RULE_READONLY, "**/.cursor/mcp.json", "Cursor MCP server definitions: commands the editor launches"},
	{VR_RULE_READONLY, "**/.cursor/hooks.json", "Cursor agent hooks: commands run on the host"},
	{VR_RULE_READONLY, "**/.cursor/environment.json", "Cursor agent environment: install and start commands"},
	{VR_RULE_READONLY, "**/.codex/", "Codex CLI project config: MCP servers, sandbox and approval settings"},
	{VR_RULE_READONLY, "**/.github/hooks/", "Copilot CLI and VS Code agent hooks: commands run on the host at session and tool events"},
	{VR_RULE_READONLY, "**/.github/agents/", "Copilot custom agents: their tools and MCP servers"},
	{VR_RULE_READONLY, "**/.roo/mcp.json", "Roo Code MCP server definitions"},
	{VR_RULE_READONLY, "**/.kiro/hooks/", "Kiro agent hooks: commands run on file events"},
	{VR_RULE_READONLY, "**/.kiro/settings/", "Kiro settings: MCP server definitions"},
	{VR_RULE_READONLY, "**/.amazonq/mcp.json", "Amazon Q MCP server definitions"},
	{VR_RULE_READONLY, "**/.continue/", "Continue config: MCP servers and commands it runs"},
	{VR_RULE_READONLY, ".crush.json", "Crush config: MCP servers and language-server commands"},
	{VR_RULE_READONLY, "crush.json", "Crush config, plain-name form"},
	{VR_RULE_READONLY, ".aider.conf.yml", "aider config: lint-cmd, test-cmd and the like run on the host"},
	{VR_RULE_READONLY, "opencode.json", "opencode config: MCP servers, permissions"},
	{VR_RULE_READONLY, "opencode.jsonc", "opencode config, JSON-with-comments form"},
	{VR_RULE_READONLY, ".opencode.json", "opencode config, older dot-file form"},
	{VR_RULE_READONLY, ".opencode/", "opencode plugins, agents and commands"},
	{VR_RULE_READONLY, "**/.cargo/config*", "cargo config: build runners, linkers, aliases run on the host"},
	{VR_RULE_READONLY, "mise.toml", "mise tasks and env hooks run when the user enters the directory"},
	{VR_RULE_READONLY, ".mise.toml", "mise config, dot-file form"},
	{VR_RULE_READONLY, "mise.*.toml", "mise.local.toml and mise.ENV.toml: same power as mise.toml"},
	{VR_RULE_READONLY, ".mise.*.toml", "mise local and per-environment config, dot-file form"},
	{VR_RULE_READONLY, ".mise/", "mise config directory (config.toml, tasks)"},
	{VR_RULE_READONLY, "**/.config/mise.toml", "mise config in .config/"},
	{VR_RULE_READONLY, "**/.config/mise/", "mise config directory in .config/"},
	{VR_RULE_READONLY, ".rtx.toml", "rtx (mise's former name) config"},
	{VR_RULE_READONLY, "rust-toolchain", "rustup toolchain override: a path toolchain runs its binaries"},
	{VR_RULE_READONLY, "rust-toolchain.toml", "rustup toolchain override: a path toolchain runs its binaries"},
	{VR_RULE_READONLY, ".pnpmfile.cjs", "pnpm runs its hooks at every install"},
	{VR_RULE_READONLY, ".pnpmfile.mjs", "pnpm hooks, ES module form"},
	{VR_RULE_READONLY, ".yarnrc", "yarn 1 config: yarn-path names a script every yarn command runs"},
	{VR_RULE_READONLY, "/.yarn/releases/", "the yarn release .yarnrc.yml's yarnPath runs for every yarn command"},
	{VR_RULE_READONLY, "/.yarn/plugins/", "yarn plugins, loaded by every yarn command"},
	{VR_RULE_READONLY, "bunfig.toml", "bun config: preload scripts run by every bun command"},
	{VR_RULE_READONLY, ".bunfig.toml", "bun config, dot-file form"},
	{VR_RULE_READONLY, ".vault-run", "the project's own vault-run config: the agent must not loosen its next run (it may only tighten, but not even that without the user)"},
};

/* Every file named config or config.worktree, wherever it is and whether
 * or not its directory is a git directory yet (so the order things are
 * made in cannot matter): git reads them as config. They are read-only, and
 * a rename onto one passes the config gate (docs/policy.md). */
static void add_gitconfig_files(VrPolicy *policy, int line)
{
	vr_policy_add_gitconfig_name(policy, "config", line,
	                             "git config (core.fsmonitor, hooksPath, aliases, filters run commands): "
	                             "changes pass the config gate");
	vr_policy_add_gitconfig_name(policy, "config.worktree", line + 1,
	                             "per-worktree git config: changes pass the config gate");
	VrRule *tmp = vr_policy_add_rule(policy, VR_RULE_HIDE, ".vault-run-gate.*", "built-in", line + 2,
	                                 FALSE, NULL);
	tmp->why = g_strdup("the config gate's file in the making: no handle on it may reach the agent");
}

void vr_policy_add_builtins(VrPolicy *policy)
{
	for (gsize i = 0; i < G_N_ELEMENTS(builtins); i++) {
		g_autoptr(GError) error = NULL;
		VrRule *rule = vr_policy_add_rule(policy, builtins[i].kind, builtins[i].pattern,
		                                  "built-in", (int)i + 1, FALSE, &error);
		/* The table is fixed at build time and its patterns are tested. */
		g_assert_no_error(error);
		rule->why = g_strdup(builtins[i].why);
	}
	add_gitconfig_files(policy, (int)G_N_ELEMENTS(builtins) + 1);
}
