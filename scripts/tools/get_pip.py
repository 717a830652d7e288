"""Fetches the pip wheel (pinned by version and hash) from PyPI into the path given, for a python3
without a pip module; pip runs from the wheel: `python3 pip.whl/pip install ...`."""

import sys

from pypi import pinned_file

VERSION = "25.3"
SHA256 = "9655943313a94722b7774661c21049070f6bbb0a1516bf02f7c8d5d9201514cd"

wheel = pinned_file("pip", f"pip-{VERSION}-py3-none-any.whl", SHA256)
with open(sys.argv[1], "wb") as out:
    out.write(wheel)
