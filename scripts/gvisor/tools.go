//go:build tools

// gVisor's runsc, the OCI runtime of sandboxd's `isolation = "gvisor"` runtimes, built from its
// Go module: `go build gvisor.dev/gvisor/runsc`. This file only pins the version in go.mod.
package gvisor

import (
	_ "gvisor.dev/gvisor/runsc"
)
