# SPDX-License-Identifier: MIT
"""`pip install .`: the tftracer Python module, built from the same C sources as `make`
(every library layer under src/ except the CLI, the web UI packed by tools/pack_assets,
and python/tftracer/_tftracer.c). Needs a C11 compiler and the Debian -dev packages
the Makefile links (libsqlite3, libzstd, zlib, libmicrohttpd, libbabeltrace2)."""
import glob
import os
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = ["core", "codec", "store", "collect", "runtime", "analyze", "export", "server"]


def rel(p):
    return os.path.relpath(p, HERE)


class BuildExt(build_ext):
    """Generates the embedded web UI (gen/assets.c) before compiling."""

    def run(self):
        gen = os.path.join(self.build_temp, "gen")
        os.makedirs(gen, exist_ok=True)
        tool = os.path.join(self.build_temp, "pack_assets")
        cc = os.environ.get("CC", "cc")
        subprocess.check_call([cc, "-std=c11", "-D_GNU_SOURCE", "-O2", "-o", tool,
                               os.path.join(HERE, "tools", "pack_assets.c"), "-lz"])
        out = os.path.join(gen, "assets.c")
        subprocess.check_call([tool, os.path.join(HERE, "web"), out + ".tmp"])
        os.replace(out + ".tmp", out)
        for ext in self.extensions:
            if out not in ext.sources:
                ext.sources.append(out)
        super().run()


sources = [rel(p) for layer in LAYERS for p in sorted(glob.glob(os.path.join(HERE, "src", layer, "*.c")))]
sources.append("python/tftracer/_tftracer.c")

ext = Extension(
    "tftracer._tftracer",
    sources=sources,
    include_dirs=["include", "src"],
    define_macros=[("_GNU_SOURCE", None)],
    extra_compile_args=["-std=c11", "-O2", "-fvisibility=hidden", "-Wno-unused-parameter"],
    libraries=["sqlite3", "zstd", "z", "microhttpd", "babeltrace2", "pthread", "m"],
)

# Build products stay under build/pip (the Makefile's O=build is next to it).
os.makedirs(os.path.join(HERE, "build", "pip"), exist_ok=True)

setup(
    options={"build": {"build_base": "build/pip"}, "egg_info": {"egg_base": "build/pip"}},
    packages=["tftracer"],
    package_dir={"tftracer": "python/tftracer"},
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExt},
)
