//go:build tools

// Helm, to lint and install the chart in deploy/helm/sandboxd on the test cluster, built from
// its Go module: `go build helm.sh/helm/v4/cmd/helm`. This file only pins the version in go.mod.
package helm

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
