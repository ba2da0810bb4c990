//go:build tools

// CoreDNS, the test cluster's DNS (Services by name, `cluster.local`), built from its Go module:
// `go build github.com/coredns/coredns`. This file only pins the version in go.mod.
package coredns

import (
	_ "github.com/coredns/coredns"
)
