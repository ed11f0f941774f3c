# cargo/rustup: toolchains and installed binaries read-only; the registry cache
# is per run (CARGO_HOME stays the host path, read-only; builds use target/).
[paths]
ro = ~/.cargo/bin;~/.rustup;~/.cargo/config.toml
[env]
allow = RUSTUP_HOME;RUSTUP_TOOLCHAIN;CARGO_TARGET_DIR
