"""One file from PyPI, pinned by name and sha256: found in the project's simple index (which must
list it with that hash), downloaded, and checked again before it is returned. For scripts/test's
installs that pip cannot do (pip itself; one file out of an sdist)."""

import hashlib
import re
import sys
import urllib.request


def pinned_file(project, filename, sha256):
    """The bytes of `filename` of `project` on PyPI, whose sha256 must be `sha256`."""
    index = urllib.request.urlopen(f"https://pypi.org/simple/{project}/").read().decode()
    found = re.search(r'href="([^"#]+/' + re.escape(filename) + r')#sha256=' + sha256, index)
    if not found:
        sys.exit(f"scripts/test: PyPI's index does not list {filename} with the pinned hash")
    data = urllib.request.urlopen(found.group(1)).read()
    if hashlib.sha256(data).hexdigest() != sha256:
        sys.exit(f"scripts/test: {filename} from PyPI does not have the pinned hash")
    return data
