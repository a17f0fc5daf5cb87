# An image for docs/cronjob.yaml: the released kubectl-captf binary, checked
# against the release's checksums.txt, on a distroless base that runs as a
# non-root user. There is no official image; build and push your own:
#
#   docker build -f docs/cronjob.Dockerfile --build-arg VERSION=v0.1.0 \
#     -t registry.example.com/kubectl-captf:v0.1.0 docs/
#
# and put that name into docs/cronjob.yaml. The project's tests do not
# build it (they check that it fetches the archive name goreleaser
# publishes); pin the base images by digest in your own copy.
FROM alpine:3.22 AS fetch
ARG VERSION
ARG TARGETARCH
RUN test -n "$VERSION" || { echo "give --build-arg VERSION=vX.Y.Z" >&2; exit 1; }
RUN apk add --no-cache curl
WORKDIR /fetch
RUN set -eu; \
    archive="kubectl-captf_linux_${TARGETARCH:-amd64}.tar.gz"; \
    base="https://github.com/captf-io/kubectl-captf/releases/download/${VERSION}"; \
    curl -fsSLO "$base/$archive"; \
    curl -fsSLO "$base/checksums.txt"; \
    grep "  $archive\$" checksums.txt | sha256sum -c -; \
    tar -xzf "$archive" kubectl-captf; \
    ./kubectl-captf version

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=fetch /fetch/kubectl-captf /usr/local/bin/kubectl-captf
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kubectl-captf"]
