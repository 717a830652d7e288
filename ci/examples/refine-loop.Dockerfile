# refine-loop.Dockerfile: your CI image with refine-loop in it. Your gate's tools (here Python's
# ruff), and the static binary copied from refine-loop's image: it needs no library, so any base
# works (Debian, -slim, Alpine). The Jenkinsfile builds its agent from this file, which it looks
# for at the repository's top.
# REPLACE: the base your gate runs on, its tools, and the release of refine-loop you use.
FROM python:3.13-slim
RUN pip install --no-cache-dir ruff==0.17.6
COPY --from=ghcr.io/org/refine-loop-action:0.1.0 /usr/local/bin/refine-loop /usr/local/bin/
