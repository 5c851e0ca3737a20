# SPDX-License-Identifier: MIT
"""`pip install .`: the tftracer Python module, built from the same C sources as `make`
(every library layer of the Makefile's LAYERS, the web UI packed by tools/pack_assets
with the static export's query engine, built to WebAssembly by the Makefile's rule, and
python/tftracer/_tftracer.c, linked with the Makefile's LDLIBS). Needs a C11 compiler,
make, clang with the wasm32 target (clang, lld, wasi-libc, libclang-rt-14-dev-wasm32)
and the Debian -dev packages the Makefile links (libsqlite3, libzstd, zlib,
libmicrohttpd, libbabeltrace2). Offline: pip install --no-build-isolation . (docs/packaging.md)."""
import glob
import os
import re
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def makefile_words(name):
    """The words the Makefile gives variable NAME (every `NAME :=`/`+=` line), so that
    a layer or a library the Makefile gains is in the module too."""
    words = []
    with open(os.path.join(HERE, "Makefile"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^%s\s*(:=|\+=|\?=|=)\s*(.*?)\s*(#.*)?$" % name, line)
            if m:
                words = (words if m.group(1) == "+=" else []) + m.group(2).split()
    if not words:
        raise SystemExit("setup.py: the Makefile sets no %s" % name)
    return words


LAYERS = makefile_words("LAYERS")
LIBRARIES = [w[2:] for w in makefile_words("LDLIBS") if w.startswith("-l")]


def version():
    """The one version of the tree: TFT_VERSION_STRING in the public header
    (docs/packaging.md); pyproject.toml declares it dynamic."""
    header = os.path.join(HERE, "include", "tftracer", "tftracer.h")
    with open(header, encoding="utf-8") as f:
        m = re.search(r'^#define TFT_VERSION_STRING "([^"]+)"$', f.read(), re.M)
    if not m:
        raise SystemExit("setup.py: %s: no TFT_VERSION_STRING" % header)
    return m.group(1)


def rel(p):
    return os.path.relpath(p, HERE)


def compile_parallel(self, sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                     extra_preargs=None, extra_postargs=None, depends=None):
    """CCompiler.compile with the C files compiled side by side, one per core
    (setuptools' own `parallel` only builds several extensions at once; this is one)."""
    from concurrent.futures import ThreadPoolExecutor
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
        output_dir, macros, include_dirs, sources, depends, extra_postargs)
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)

    def one(obj):
        if obj in build:
            src, ext = build[obj]
            self._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(one, objects))
    return objects


class BuildExt(build_ext):
    """Generates the embedded web UI (gen/assets.c) before compiling; compiles the C
    files side by side (compile_parallel)."""

    def build_extensions(self):
        self.compiler.compile = compile_parallel.__get__(self.compiler)
        super().build_extensions()

    def run(self):
        gen = os.path.join(self.build_temp, "gen")
        os.makedirs(gen, exist_ok=True)
        tool = os.path.join(self.build_temp, "pack_assets")
        cc = os.environ.get("CC", "cc")
        subprocess.check_call([cc, "-std=c11", "-D_GNU_SOURCE", "-O2", "-o", tool,
                               os.path.join(HERE, "tools", "pack_assets.c"), "-lz"])
        # the static export's query engine (WebAssembly), by the Makefile's own rule
        mk = os.path.join(os.path.abspath(self.build_temp), "mk")
        wasm = os.path.join(mk, "wasm", "tftracer.wasm")
        subprocess.check_call(["make", "-s", "-C", HERE, "-j2", "O=" + mk, wasm])
        out = os.path.join(gen, "assets.c")
        subprocess.check_call([tool, os.path.join(HERE, "web"), out + ".tmp", wasm])
        os.replace(out + ".tmp", out)
        for ext in self.extensions:
            if out not in ext.sources:
                ext.sources.append(out)
        super().run()


# (a module too big for one file is a subfolder of its layer: src/collect/runmeta/ etc.)
sources = [rel(p) for layer in LAYERS for pat in ("*.c", os.path.join("*", "*.c"))
           for p in sorted(glob.glob(os.path.join(HERE, "src", layer, pat)))]
sources.append("python/tftracer/_tftracer.c")

ext = Extension(
    "tftracer._tftracer",
    sources=sources,
    include_dirs=["include", "src"],
    define_macros=[("_GNU_SOURCE", None)],
    extra_compile_args=["-std=c11", "-O2", "-fvisibility=hidden", "-Wno-unused-parameter"],
    libraries=LIBRARIES,
)

# Build products stay under build/pip (the Makefile's O=build is next to it).
os.makedirs(os.path.join(HERE, "build", "pip"), exist_ok=True)

setup(
    version=version(),
    options={"build": {"build_base": "build/pip"}, "egg_info": {"egg_base": "build/pip"}},
    packages=["tftracer"],
    package_dir={"tftracer": "python/tftracer"},
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExt},
)
