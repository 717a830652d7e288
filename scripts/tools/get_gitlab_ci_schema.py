"""Fetches check-jsonschema's wheel (pinned by version and hash) from PyPI and writes the one file
of it the tests need to the path given: gitlab-ci.json, GitLab's own JSON Schema of
.gitlab-ci.yml (MIT, GitLab's), which check-jsonschema vendors and the tests validate the GitLab
examples against. Nothing of the wheel runs and nothing else of it is kept."""

import io
import os
import sys
import zipfile

from pypi import pinned_file

VERSION = "0.39.0"
SHA256 = "14ce5c94871c551268ea948ffe21e9f1464dc48fb20bf9a4c13deeaaf756cf9b"
MEMBER = "check_jsonschema/builtin_schemas/vendor/gitlab-ci.json"

wheel = pinned_file(
    "check-jsonschema", f"check_jsonschema-{VERSION}-py3-none-any.whl", SHA256
)
with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
    try:
        schema = archive.read(MEMBER)
    except KeyError:
        sys.exit(f"scripts/test: the check-jsonschema {VERSION} wheel holds no file {MEMBER}")
partial = sys.argv[1] + ".partial"
with open(partial, "wb") as out:
    out.write(schema)
os.replace(partial, sys.argv[1])
