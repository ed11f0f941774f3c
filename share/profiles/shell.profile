# An interactive shell for poking around: nothing of the home directory, no network.
[profile]
description = interactive shell (bash, zsh, sh) with git
commands = bash;zsh;sh;fish
toolchains = git
