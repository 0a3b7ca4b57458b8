# The manager image, the conventional way: `docker build -t fleetbench/manager:dev .`
# Base images are build arguments so mirrors and pinned digests can be swapped in; the manager
# is one static binary, so scratch serves (it needs no CA bundle: it trusts the cluster CA).
# Where no Docker engine or registry is reachable (as on the project's own CI), use
# `make manager-image`, which packs the same static binary with go-containerregistry.
ARG GO_IMAGE=golang:1.26
ARG BASE_IMAGE=scratch

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY internal/ internal/
COPY pkg/ pkg/
RUN CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w" -o /out/manager ./cmd/manager

FROM ${BASE_IMAGE}
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
