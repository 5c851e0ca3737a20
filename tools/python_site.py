#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""python_site.py PREFIX: the folder under PREFIX from which this Python imports
packages built for it (`make install` puts the tftracer module there).

Debian's Python: /usr -> /usr/lib/python3/dist-packages (its deb_system scheme),
/usr/local (or any P/local) -> P/local/lib/python3.X/dist-packages (posix_local,
on sys.path by default); any other prefix, or another Python:
PREFIX/lib/python3.X/site-packages (posix_prefix: put it on PYTHONPATH).
Exit status: 0 ok, 2 bad usage."""
import os
import sys
import sysconfig

if len(sys.argv) != 2 or not sys.argv[1].startswith("/"):
    sys.stderr.write("usage: python_site.py /PREFIX\n")
    sys.exit(2)
prefix = sys.argv[1].rstrip("/") or "/"
schemes = sysconfig.get_scheme_names()
if prefix == "/usr" and "deb_system" in schemes:
    scheme, base = "deb_system", prefix
elif prefix.endswith("/local") and "posix_local" in schemes:
    scheme, base = "posix_local", prefix[: -len("/local")] or "/"
else:
    scheme, base = "posix_prefix", prefix
path = sysconfig.get_path("platlib", scheme, vars={"base": base, "platbase": base})
print("/" + os.path.normpath(path).lstrip("/"))
