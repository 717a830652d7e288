"""Fetches pytest's sdist (pinned by version and hash) from PyPI and writes the one file of it the
tests need to the path given: junit-10.xsd, the JUnit schema of Jenkins' xunit plugin, which
pytest tests its own junitxml against and which the tests validate junit.xml against. Nothing of
the sdist runs and nothing else of it is kept."""

import io
import os
import sys
import tarfile

from pypi import pinned_file

VERSION = "9.2.0"
SHA256 = "97c4f3b1f3c7414aa36465e09b8220f1d03627993bd51b1282e193753c80557b"
MEMBER = f"pytest-{VERSION}/testing/example_scripts/junit-10.xsd"

sdist = pinned_file("pytest", f"pytest-{VERSION}.tar.gz", SHA256)
with tarfile.open(fileobj=io.BytesIO(sdist), mode="r:gz") as tar:
    try:
        schema = tar.extractfile(MEMBER).read()
    except (KeyError, AttributeError):
        sys.exit(f"scripts/test: the pytest {VERSION} sdist holds no file {MEMBER}")
partial = sys.argv[1] + ".partial"
with open(partial, "wb") as out:
    out.write(schema)
os.replace(partial, sys.argv[1])
