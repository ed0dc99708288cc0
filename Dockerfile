# mcpgate container image: a static binary on distroless, run as non-root.
# Configuration is by MCPGATE_* environment variables (every serve flag).
# No container engine runs in this project's CI: scripts/check-dockerfile.sh
# runs this file's build command instead (see docs/operations.md).

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
ARG COMMIT=
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags="-s -w -X github.com/mcpgate/mcpgate.Version=${VERSION} -X github.com/mcpgate/mcpgate.Commit=${COMMIT}" -o /out/mcpgate ./cmd/mcpgate

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcpgate /usr/local/bin/mcpgate
# SQLite lives here when MCPGATE_DB is empty; mount a volume on it.
ENV MCPGATE_ADDR=:8094 \
    MCPGATE_DATA_DIR=/var/lib/mcpgate \
    MCPGATE_DRAIN_TIMEOUT=30s \
    MCPGATE_DRAIN_DELAY=5s
WORKDIR /var/lib/mcpgate
USER nonroot:nonroot
EXPOSE 8094
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["/usr/local/bin/mcpgate", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/mcpgate"]
CMD ["serve"]
