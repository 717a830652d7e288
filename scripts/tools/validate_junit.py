"""Validates JUnit XML files against an XML schema with lxml, whose wheel bundles libxml2 (the
library `xmllint --schema` is a front end of): `python3 validate_junit.py SCHEMA FILE...`.
Prints every error with its file and line and exits 1 when a file is not well-formed or not
valid. When `xmllint` is on PATH it validates each file too; the tests do not depend on it."""

import shutil
import subprocess
import sys

from lxml import etree

schema_path, files = sys.argv[1], sys.argv[2:]
schema = etree.XMLSchema(etree.parse(schema_path))
xmllint = shutil.which("xmllint")
failed = False
for path in files:
    try:
        document = etree.parse(path)
    except etree.XMLSyntaxError as error:
        print(f"{path}: not well-formed XML: {error}")
        failed = True
        continue
    if schema.validate(document):
        print(f"{path}: valid against {schema_path} (lxml, libxml2 {etree.LIBXML_VERSION})")
    else:
        for error in schema.error_log:
            print(f"{path}:{error.line}: {error.message}")
        failed = True
    if xmllint:
        lint = subprocess.run(
            [xmllint, "--noout", "--schema", schema_path, path],
            capture_output=True,
            text=True,
            check=False,
        )
        print(f"xmllint: {lint.stderr.strip()}")
        failed = failed or lint.returncode != 0
sys.exit(1 if failed else 0)
