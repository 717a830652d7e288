# syntax=docker/dockerfile:1
# refine-loop for GitLab CI, Jenkins and any docker run: Alpine (sh, busybox, its CA bundle) and
# the static binary. No ENTRYPOINT, so it works as a GitLab job image and as a Jenkins
# docker.inside() image; the job's script calls `refine-loop`. No git: the binary reads and writes
# repositories through libgit2 and never runs the git command.
#
# The binary comes from the source (the default, `docker build .`) or from release binaries
# already built: `docker buildx build --platform linux/amd64,linux/arm64 --build-arg
# BINARY=prebuilt .` with dist/linux-amd64/refine-loop and dist/linux-arm64/refine-loop in the
# context. Bases are pinned by the digest of their multi-arch index: bump tag and digest together.
ARG BINARY=build

# musl is native on Alpine: the release build is a static binary.
FROM rust:1.98.1-alpine3.24@sha256:7cc1c22d77d9432f7fe012a70e6d3e555af54c2a6832700ed7d553f1769ae89f AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked \
    && cp target/release/refine-loop /refine-loop

FROM scratch AS prebuilt
ARG TARGETARCH
COPY dist/linux-${TARGETARCH}/refine-loop /refine-loop

FROM ${BINARY} AS binary

FROM alpine:3.24@sha256:294b683cb724975bec92580e1e685676bd4b50bda910ddb8c51d4cabeaec77e6
# A mounted workspace belongs to whoever checked it out, and libgit2 opens a repository another
# uid owns only when safe.directory allows it. It reads /etc/gitconfig, for every user.
RUN printf '[safe]\n\tdirectory = *\n' > /etc/gitconfig
COPY --from=binary --chmod=0755 /refine-loop /usr/local/bin/refine-loop
# Any uid works (docker run --user, Jenkins): HOME is world-writable, no passwd entry is needed.
ENV HOME=/tmp
USER 10001:10001
CMD ["sh"]
