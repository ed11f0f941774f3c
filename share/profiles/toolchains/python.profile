# python/pip/uv: user installs read-only; pip and uv caches are per run.
[paths]
ro = ~/.local/lib;~/.local/bin;~/.pyenv;~/.cargo/bin/uv
[env]
allow = PYENV_ROOT;VIRTUAL_ENV;PYTHONPATH
