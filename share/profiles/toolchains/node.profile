# node/npm/bun: a user-level global prefix read-only; the npm cache lives in the
# per-run home (a tmpfs), never in the host's ~/.npm the next build trusts.
[paths]
ro = ~/.npm-global;~/.nvm;~/.bun/bin;~/.volta
[env]
allow = NODE_OPTIONS;NVM_DIR;npm_config_registry
