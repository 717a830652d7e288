# refine-loop for GitLab CI, Jenkins and any docker run: a small image with sh, git,
# ca-certificates and the binary. No ENTRYPOINT, so it works as a GitLab job image and as a
# Jenkins docker.inside() image; the job's script calls `refine-loop`.

FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked \
    && cp target/release/refine-loop /usr/local/bin/refine-loop

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends git=1:2.39.* ca-certificates=2023* \
    && rm -rf /var/lib/apt/lists/* \
    # Mounted workspaces belong to another uid: let git read them, for any user, without HOME.
    && git config --system --add safe.directory '*'
COPY --from=build /usr/local/bin/refine-loop /usr/local/bin/refine-loop
# Runs as root or as any uid (docker run --user, Jenkins): nothing needs a writable HOME.
ENV HOME=/tmp
CMD ["sh"]
