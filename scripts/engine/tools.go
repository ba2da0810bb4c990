//go:build tools

// The Docker engine sandboxd runs on, built from its Go module: `go build` these packages.
// This file only pins them in go.mod, whose other requirements are the engine's own vendor.mod
// of the same version (its module has no go.mod, so they are not inherited).
package engine

import (
	_ "github.com/docker/docker/cmd/docker-proxy"
	_ "github.com/docker/docker/cmd/dockerd"
)
