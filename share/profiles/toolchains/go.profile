# go: the toolchain and installed binaries read-only; module cache per run.
[paths]
ro = ~/go/bin;~/sdk;/usr/local/go
[env]
allow = GOPATH;GOFLAGS;GOPROXY;GOTOOLCHAIN
