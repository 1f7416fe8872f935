#!/usr/bin/env bash
# Makes a helm v3 binary available for the chart tests (test/unit/helm); `npm test` runs it.
# - helm already on PATH or in Go's bin folder ($(go env GOBIN), else $(go env GOPATH)/bin):
#   nothing to do.
# - otherwise, with Go present: builds the pinned release with `go install` into that folder.
# - without Go: fails naming what to install.
# Prints the path of the helm binary on stdout (progress goes to stderr).
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.22.0}"

if command -v helm >/dev/null 2>&1; then
  command -v helm
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "install-helm: helm is not installed and Go is not installed to build it: install Go 1.21+ (https://go.dev/doc/install; it fetches the Go toolchain helm needs) or helm ${HELM_VERSION} (https://helm.sh/docs/intro/install/)" >&2
  exit 1
fi

gobin="$(go env GOBIN)"
[ -n "${gobin}" ] || gobin="$(go env GOPATH)/bin"
if [ -x "${gobin}/helm" ]; then
  echo "${gobin}/helm"
  exit 0
fi

echo "install-helm: building helm ${HELM_VERSION} with go install into ${gobin} (a few minutes on a small machine)" >&2
GOFLAGS="${GOFLAGS:-} -buildvcs=false" go install "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
"${gobin}/helm" version --short >&2
echo "${gobin}/helm"
