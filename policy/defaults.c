/* policy/defaults.c — the built-in rules. Each says why it exists; `vault-run
 * policy show` prints them with their number as "built-in:N". Order matters
 * (last match wins among these and the user's rules): the SHOW rules for
 * templates follow the ".env.*" rule they carve out of. */
#include "policy-private.h"

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
	{VR_RULE_READONLY, ".husky/", "husky git hooks, run at the next commit"},
	{VR_RULE_READONLY, ".githooks/", "git hooks directory commonly set as core.hooksPath"},
	{VR_RULE_READONLY, ".pre-commit-config.yaml", "pre-commit runs what it names at the next commit"},
	{VR_RULE_READONLY, ".envrc", "direnv executes it when the user enters the directory"},
	{VR_RULE_READONLY, ".vscode/", "tasks, launch configs and settings that run commands in the editor"},
	{VR_RULE_READONLY, ".idea/", "JetBrains run configurations and tool settings"},
	{VR_RULE_READONLY, ".devcontainer/", "container definitions and lifecycle commands run by the editor"},
	{VR_RULE_READONLY, ".mcp.json", "MCP server definitions: commands an agent harness launches"},
	{VR_RULE_READONLY, "**/.claude/commands/", "Claude Code custom commands (prompts with tool permissions)"},
	{VR_RULE_READONLY, "**/.claude/agents/", "Claude Code sub-agent definitions"},
	{VR_RULE_READONLY, "**/.claude/settings*.json", "Claude Code hooks and permission allow-lists"},
	{VR_RULE_READONLY, "opencode.json", "opencode config: MCP servers, permissions"},
	{VR_RULE_READONLY, ".opencode/", "opencode plugins, agents and commands"},
	{VR_RULE_READONLY, "**/.cargo/config*", "cargo config: build runners, linkers, aliases run on the host"},
	{VR_RULE_READONLY, "mise.toml", "mise tasks and env hooks run when the user enters the directory"},
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
