# git: the user's identity and settings, read-only (a writable ~/.gitconfig
# could set core.hooksPath or an alias the host runs later).
[paths]
ro = ~/.gitconfig;~/.config/git/config;~/.config/git/ignore;~/.config/git/attributes
[env]
allow = GIT_AUTHOR_NAME;GIT_AUTHOR_EMAIL;GIT_COMMITTER_NAME;GIT_COMMITTER_EMAIL
