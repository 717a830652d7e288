"""Fetches the pip wheel (pinned by version and hash) from PyPI into the path given, for a python3
without a pip module; pip runs from the wheel: `python3 pip.whl/pip install ...`."""

import hashlib
import re
import sys
import urllib.request

VERSION = "25.3"
SHA256 = "9655943313a94722b7774661c21049070f6bbb0a1516bf02f7c8d5d9201514cd"

index = urllib.request.urlopen("https://pypi.org/simple/pip/").read().decode()
found = re.search(
    r'href="([^"#]+/pip-' + re.escape(VERSION) + r'-py3-none-any\.whl)#sha256=' + SHA256, index
)
if not found:
    sys.exit(f"scripts/test: PyPI's index does not list pip {VERSION} with the pinned hash")
wheel = urllib.request.urlopen(found.group(1)).read()
if hashlib.sha256(wheel).hexdigest() != SHA256:
    sys.exit(f"scripts/test: the pip {VERSION} wheel from PyPI does not have the pinned hash")
with open(sys.argv[1], "wb") as out:
    out.write(wheel)
