# tftracer: one non-recursive Makefile.
#   make                 build/tftracer (the CLI) and build/libtftracer.a
#   make test            install deps, build with ASan+UBSan, run every test, print the summary
#   make bench           performance benchmarks (numbers go to BENCHMARKS.md)
#   make fuzz            run each libFuzzer target for FUZZ_SECONDS (default 60)
#   make demo            the main job (see README)
# Knobs: O=<builddir> DEBUG=1 ASAN=1 CC=clang V=1
O       ?= build
CC      ?= cc
V       ?= 0
Q        = $(if $(filter 1,$(V)),,@)

WARN    := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
           -Wformat=2 -Wwrite-strings -Wundef -Wno-unused-parameter
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -fPIC $(WARN) -Iinclude -Isrc -MMD -MP
ifeq ($(DEBUG),1)
CFLAGS  += -O0 -DTFT_DEBUG
endif
ifeq ($(ASAN),1)
CFLAGS  += -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(WERROR),1)
CFLAGS  += -Werror
endif
LDLIBS  += -lsqlite3 -lzstd -lz -lpthread -lm
# the tfprof> shell of `tftracer prof` (cli/cmd_prof_shell.c): libedit (BSD), Debian's libedit-dev
CLI_LDLIBS := -ledit
# CTF (LTTng) traces are read through libbabeltrace2 (Debian: libbabeltrace2-dev).
LDLIBS  += -lbabeltrace2

# Library layers, bottom to top. Each folder is one layer (see ARCHITECTURE.md).
LAYERS  := core codec store collect runtime job analyze export query server
LIB_SRC := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c src/$(l)/*/*.c))
CLI_SRC := $(wildcard src/cli/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(O)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/%.o)

# ---- the static export's query engine (WebAssembly) -------------------------
# A standalone HTML export answers its page's queries with the server's own
# code (docs/http-api.md "Static HTML export"): src/wasm/ and the files it
# uses, compiled by clang for wasm32-wasi against Debian's wasi-libc (clang,
# lld, wasi-libc, libclang-rt-14-dev-wasm32), linked into
# $(O)/wasm/tftracer.wasm, which joins the embedded web UI (below).
WASM_CC     ?= clang
WASM        := $(O)/wasm/tftracer.wasm
WASM_SRC    := $(filter-out src/core/workers.c,$(wildcard src/core/*.c)) \
               src/codec/json_read.c src/codec/json_write.c src/codec/source.c \
               src/store/session.c src/store/chunk_stats.c $(wildcard src/analyze/stats*.c) \
               $(wildcard src/export/html_data*.c) src/export/export_summary.c \
               $(wildcard src/query/*.c) $(wildcard src/wasm/*.c)
WASM_OBJ    := $(WASM_SRC:%.c=$(O)/wasm/%.o)
WASM_CFLAGS := --target=wasm32-wasi -std=c11 -D_GNU_SOURCE -D_WASI_EMULATED_MMAN -O2 $(WARN) \
               -Iinclude -Isrc -MMD -MP

$(O)/wasm/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $< (wasm)")
	$(Q)$(WASM_CC) $(WASM_CFLAGS) -c $< -o $@

$(WASM): $(WASM_OBJ)
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(WASM_CC) --target=wasm32-wasi -nostartfiles -Wl,--no-entry -Wl,--strip-all -o $@.tmp \
		$(WASM_OBJ) -lwasi-emulated-mman && mv $@.tmp $@

wasm: $(WASM)
-include $(WASM_OBJ:.o=.d)

# ---- server ------------------------------------------------------------------
# The HTTP server links libmicrohttpd. The web UI (every file under web/) is
# embedded by tools/pack_assets into the generated $(O)/gen/assets.c (the
# table of src/export/web_assets.h: the server serves it, the standalone HTML
# export inlines it), which joins the library; the binary then needs no files
# on disk.
.DEFAULT_GOAL := all
LDLIBS      += -lmicrohttpd
WEB_FILES   := $(shell find web -type f 2>/dev/null)
WEB_DIRS    := $(shell find web -type d 2>/dev/null)
ASSETS_C    := $(O)/gen/assets.c
LIB_OBJ     += $(O)/gen/assets.o
LIB_SRC     += $(ASSETS_C)

$(O)/tools/pack_assets: tools/pack_assets.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o $@ $< -lz

$(ASSETS_C): $(O)/tools/pack_assets $(WEB_FILES) $(WEB_DIRS) $(WASM)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  GEN     $@")
	$(Q)$(O)/tools/pack_assets web $@.tmp $(WASM) && mv $@.tmp $@

$(O)/gen/assets.o: $(ASSETS_C) src/export/web_assets.h
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -c $< -o $@

$(O)/bench/bench_viewport: bench/bench_viewport.c $(O)/libtftracer.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(O)/libtftracer.a $(LDFLAGS) $(LDLIBS)

server-tools: $(O)/bench/bench_viewport
.PHONY: server-tools

# tftracer prof on a generated 10M-event Kineto-shaped session (BENCHMARKS.md)
$(O)/bench/bench_prof: bench/bench_prof.c $(O)/libtftracer.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(O)/libtftracer.a $(LDFLAGS) $(LDLIBS)
# ---- end server --------------------------------------------------------------

# ---- runtime -----------------------------------------------------------------
# The in-process runtime (src/runtime, see docs/runtime.md) is in
# libtftracer.a like every layer, and also in $(O)/libtftracer.so: the
# runtime, core and store objects built again with -fvisibility=hidden, so
# that only TFT_API symbols are exported.
#   make runtime    $(O)/libtftracer.so (also part of `make`)
#   make examples   examples/c/*.c, linked against the .so
#   make bench-runtime   $(O)/bench/bench_runtime (LTTng-UST baseline if installed)
#   TSAN=1          -fsanitize=thread (for tests/unit/test_runtime_mt)
ifeq ($(TSAN),1)
CFLAGS  += -O1 -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
endif
SO_LAYERS   := core store runtime
SO_SRC      := $(foreach l,$(SO_LAYERS),$(wildcard src/$(l)/*.c src/$(l)/*/*.c))
SO_OBJ      := $(SO_SRC:%.c=$(O)/so/%.o)
SO_LIBS     := -lsqlite3 -lzstd -lz -lpthread -lm
EXAMPLES_C  := $(wildcard examples/c/*.c)
EXAMPLES    := $(EXAMPLES_C:examples/c/%.c=$(O)/examples/%)
BENCH_LTTNG := $(if $(wildcard /usr/include/lttng/tracepoint.h /usr/include/*/lttng/tracepoint.h),-llttng-ust -ldl,-DTFT_BENCH_NO_LTTNG)

$(O)/so/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $< (.so)")
	$(Q)$(CC) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(O)/libtftracer.so: $(SO_OBJ)
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(CC) -shared -Wl,-soname,libtftracer.so -o $@ $^ $(LDFLAGS) $(SO_LIBS)

$(O)/examples/%: examples/c/%.c include/tftracer/tftracer.h include/tftracer/zone.h $(O)/libtftracer.so
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS) -DTFT_ENABLE -o $@ $< -L$(O) -l:libtftracer.so \
		-Wl,-rpath,$(abspath $(O)) $(LDFLAGS) -lpthread

$(O)/bench/bench_runtime: bench/bench_runtime.c include/tftracer/tftracer.h $(O)/libtftracer.so
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS) -DTFT_ENABLE -Ibench -o $@ $< -L$(O) -l:libtftracer.so \
		-Wl,-rpath,$(abspath $(O)) $(LDFLAGS) -lpthread $(filter -l%,$(BENCH_LTTNG)) \
		$(filter -D%,$(BENCH_LTTNG))

all: $(O)/libtftracer.so
runtime: $(O)/libtftracer.so
examples: $(EXAMPLES)
bench-runtime: $(O)/bench/bench_runtime
.PHONY: runtime examples bench-runtime
-include $(SO_OBJ:.o=.d)
# ---- end runtime --------------------------------------------------------------

# ---- preload (interceptors) ---------------------------------------------------
# $(O)/libtftracer-preload.so: the runtime layer (core, store, runtime) and the
# interceptors of src/intercept/, built with -fvisibility=hidden like
# libtftracer.so and linked -Bsymbolic-functions, so that its own calls stay
# inside it while the program's calls to the runtime, OpenCL, dlsym and exec
# reach it; its data (tft_rt_state, which a program's inline gates read) is
# not bound locally: a program linked with libtftracer.so may hold the one
# copy (a copy relocation) that every object then uses (docs/intercept.md). `tftracer record` puts it in LD_PRELOAD.
#   OpenCL: built with the Khronos headers (ocl-icd-opencl-dev); without them
#   the interceptor is left out and the library says so at build time.
#   CUDA: built where $(CUDA_HOME)/include/cupti.h exists (CUPTI callback and
#   activity APIs, NVTX injection); libcupti is opened at run time, not linked.
#   MPI: built where Open MPI's mpi.h exists (libopenmpi-dev; MPI_INC to name
#   another); the PMPI functions are looked up at run time, libmpi is not linked.
CUDA_HOME   ?= $(firstword $(wildcard /usr/local/cuda /usr/local/cuda-*))
HAVE_CL     := $(wildcard /usr/include/CL/cl.h)
HAVE_CUPTI  := $(if $(CUDA_HOME),$(wildcard $(CUDA_HOME)/include/cupti.h))
CUPTI_LIB   := $(firstword $(wildcard $(CUDA_HOME)/lib64/libcupti.so $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so))
MPI_INC     ?= $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/openmpi/include /usr/lib/*/openmpi/include \
                 /usr/include/openmpi /usr/include/x86_64-linux-gnu/openmpi))
HAVE_MPI    := $(if $(MPI_INC),$(shell grep -l 'define OPEN_MPI 1' $(MPI_INC)/mpi.h 2>/dev/null))
ICPT_CFLAGS := $(if $(HAVE_CL),-DTFT_HAVE_OPENCL) \
               $(if $(HAVE_MPI),-DTFT_HAVE_MPI -isystem $(MPI_INC)) \
               $(if $(HAVE_CUPTI),-DTFT_HAVE_CUPTI -isystem $(CUDA_HOME)/include \
                 $(if $(CUPTI_LIB),-DTFT_CUPTI_LIB='"$(CUPTI_LIB)"'))
ICPT_SRC    := $(wildcard src/intercept/*.c)
ICPT_OBJ    := $(ICPT_SRC:%.c=$(O)/so/%.o)
PRELOAD     := $(O)/libtftracer-preload.so

$(ICPT_OBJ): CFLAGS += $(ICPT_CFLAGS)

$(PRELOAD): $(SO_OBJ) $(ICPT_OBJ)
	$(if $(Q),@echo "  LINK    $@")
	$(if $(HAVE_CL),,@echo "preload: no OpenCL headers (/usr/include/CL/cl.h, ocl-icd-opencl-dev): OpenCL is not intercepted")
	$(if $(HAVE_CUPTI),,@echo "preload: no CUPTI headers (CUDA_HOME=$(or $(CUDA_HOME),none)): CUDA is not intercepted")
	$(if $(HAVE_MPI),,@echo "preload: no Open MPI headers (mpi.h, libopenmpi-dev): MPI is not intercepted")
	$(Q)$(CC) -shared -Wl,-Bsymbolic-functions -Wl,-soname,libtftracer-preload.so -o $@ $^ $(LDFLAGS) \
		$(SO_LIBS) -ldl

all: $(PRELOAD)
preload: $(PRELOAD)
.PHONY: preload
-include $(ICPT_OBJ:.o=.d)
# ---- end preload ----------------------------------------------------------------

# ---- python ------------------------------------------------------------------
# The Python module `tftracer` (python/tftracer, docs/python.md): _tftracer.c
# against the CPython API of $(PYTHON), linked with libtftracer.a (nothing
# else needed at run time; its runtime API stays interposable: see
# python/tftracer/_tftracer.map), plus the package's .py files, in $(O)/python:
#   PYTHONPATH=$(O)/python $(PYTHON) -c 'import tftracer'
# Needs python3-dev (python3-config); without it the module is skipped.
# `pip install .` builds the same sources through setup.py.
PYTHON      ?= /usr/bin/python3
PY_CONFIG   := $(firstword $(wildcard $(PYTHON)-config /usr/bin/python3-config))
PY_INCLUDES := $(if $(PY_CONFIG),$(shell $(PY_CONFIG) --includes 2>/dev/null))
PY_EXT      := $(if $(PY_CONFIG),$(shell $(PY_CONFIG) --extension-suffix 2>/dev/null))
PY_DIR      := $(O)/python/tftracer
PY_MOD      := $(PY_DIR)/_tftracer$(PY_EXT)
PY_SRC      := $(wildcard python/tftracer/*.py)
PY_COPIES   := $(PY_SRC:python/tftracer/%=$(PY_DIR)/%)

$(O)/python/_tftracer.o: python/tftracer/_tftracer.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(PY_INCLUDES) -fvisibility=hidden -c $< -o $@

$(PY_MOD): $(O)/python/_tftracer.o $(O)/libtftracer.a python/tftracer/_tftracer.map
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(CC) -shared -o $@ $< $(O)/libtftracer.a \
		-Wl,--version-script,python/tftracer/_tftracer.map $(LDFLAGS) $(LDLIBS)

$(PY_DIR)/%.py: python/tftracer/%.py
	@mkdir -p $(dir $@)
	$(Q)cp $< $@

python: $(if $(PY_INCLUDES),$(PY_MOD) $(PY_COPIES))
all: python
.PHONY: python
-include $(O)/python/_tftracer.d
# ---- end python ----------------------------------------------------------------

TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(O)/tests/%)

all: $(O)/tftracer

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(O)/libtftracer.a: $(LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

# (record checks the counters with the preload library's own perf code)
$(O)/tftracer: $(CLI_OBJ) $(O)/src/intercept/perf.o $(O)/libtftracer.a
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CLI_LDLIBS)

$(O)/src/cli/record_intercept.o: CFLAGS += $(if $(HAVE_CUPTI),-DTFT_RECORD_CUPTI)

$(O)/tests/%: tests/unit/%.c $(wildcard tests/lib/*.h) $(O)/libtftracer.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib -o $@ $< $(O)/libtftracer.a $(LDFLAGS) $(LDLIBS)

units: $(TEST_BIN)

# ---- fuzzing (clang + libFuzzer, ASan+UBSan) --------------------------------
# The library is compiled once with -fsanitize=fuzzer-no-link and archived;
# each fuzz/fuzz_<reader>.c links against it.
FUZZ_SRC := $(wildcard fuzz/fuzz_*.c)
FUZZ_O   := build-fuzz
FUZZ_BIN := $(FUZZ_SRC:fuzz/%.c=$(FUZZ_O)/%)
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -Isrc -fno-sanitize-recover=all \
	-fsanitize=fuzzer-no-link,address,undefined -DTFT_XSPACE_PAR_MIN_BYTES=0
FUZZ_LIB_SRC := $(filter-out $(ASSETS_C),$(LIB_SRC))
FUZZ_LIB_OBJ := $(FUZZ_LIB_SRC:%.c=$(FUZZ_O)/obj/%.o) $(FUZZ_O)/obj/gen/assets.o

$(FUZZ_O)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $< (fuzz)")
	$(Q)clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_O)/obj/gen/assets.o: $(ASSETS_C)
	@mkdir -p $(dir $@)
	$(Q)clang $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_O)/libtftracer-fuzz.a: $(FUZZ_LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_O)/%: fuzz/%.c $(wildcard fuzz/*.h) $(FUZZ_O)/libtftracer-fuzz.a
	$(if $(Q),@echo "  FUZZ    $@")
	$(Q)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_O)/libtftracer-fuzz.a $(LDLIBS)

fuzz-build: $(FUZZ_BIN)
fuzz: fuzz-build
	$(Q)for f in $(FUZZ_BIN); do n=$$(basename $$f); mkdir -p $(FUZZ_O)/corpus/$$n; \
		echo "fuzz: $$n for $(FUZZ_SECONDS)s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(FUZZ_O)/corpus/$$n fuzz/corpus/$$n 2>&1 | tail -n 3 || exit 1; done

# ---- version, install, packaging ----------------------------------------------
# (docs/packaging.md) The version is defined once: TFT_VERSION_STRING in
# include/tftracer/tftracer.h (the installed header carries it to programs).
# The CLI and the library compile it in; the pkg-config file, `make dist`,
# setup.py (and so pyproject.toml) read it from there; debian/rules refuses to
# build when debian/changelog names another. tools/set-version.sh changes it.
#   make man          $(O)/man/: tftracer.1 from docs/cli.md and tftracer-NAME.1
#                     from every docs/cmd-NAME.md (go-md2man; part of `make` where
#                     go-md2man is installed)
#   make install      PREFIX=/usr/local DESTDIR= : the CLI, every $(O)/lib*.so and
#                     lib*.a, tftracer.pc, include/tftracer/*.h, the Python module
#                     for $(PYTHON), the man pages, bash completion, docs/*.md
#   make uninstall    the same PREFIX/DESTDIR: removes all of it
#   make dist         $(O)/tftracer-VERSION.tar.gz of the committed tree (git archive)
VERSION      := $(shell sed -n 's/^\#define TFT_VERSION_STRING "\(.*\)"$$/\1/p' include/tftracer/tftracer.h)
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
DATADIR      ?= $(PREFIX)/share
MANDIR       ?= $(DATADIR)/man
DOCDIR       ?= $(DATADIR)/doc/tftracer
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR  ?= $(DATADIR)/bash-completion/completions
# where $(PYTHON) imports from under PREFIX (Debian: /usr/lib/python3/dist-packages
# for /usr, /usr/local/lib/python3.X/dist-packages for /usr/local)
PYTHONDIR    ?= $(shell $(PYTHON) tools/python_site.py $(PREFIX) 2>/dev/null)
MD2MAN       ?= go-md2man
INSTALL      ?= install

MAN_MD       := docs/cli.md $(wildcard docs/cmd-*.md)
MAN_PAGES    := $(O)/man/tftracer.1 $(patsubst docs/cmd-%.md,$(O)/man/tftracer-%.1,$(wildcard docs/cmd-*.md))
MKMAN         = $(PYTHON) tools/mkman.py --md2man $(MD2MAN) --version $(VERSION) --docdir $(DOCDIR)

# Values baked into build outputs are kept in files that change only when the
# value does, so that what depends on them is rebuilt then and only then.
define tft_stamp
	@mkdir -p $(dir $@)
	@printf '%s\n' '$(1)' | cmp -s - $@ 2>/dev/null || printf '%s\n' '$(1)' >$@
endef
$(O)/gen/docdir.stamp: FORCE
	$(call tft_stamp,$(DOCDIR))

$(O)/man/tftracer.1: docs/cli.md $(wildcard docs/cmd-*.md) tools/mkman.py include/tftracer/tftracer.h $(O)/gen/docdir.stamp
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  MAN     $@")
	$(Q)$(MKMAN) $< $@

$(O)/man/tftracer-%.1: docs/cmd-%.md docs/cli.md $(wildcard docs/cmd-*.md) tools/mkman.py include/tftracer/tftracer.h $(O)/gen/docdir.stamp
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  MAN     $@")
	$(Q)$(MKMAN) $< $@

man: $(MAN_PAGES)
all: $(if $(shell command -v $(MD2MAN) 2>/dev/null),man)

# `tftracer --version`: the features of this build. TLS is asked of the
# libmicrohttpd the binary runs with; the Python module and the interceptors
# are what this build made (HAVE_CL / HAVE_CUPTI: set by the preload section
# where src/intercept/ exists).
TFT_PY_VERSION   = $(if $(PY_INCLUDES),$(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null))
TFT_INTERCEPTORS = $(strip $(if $(wildcard src/intercept/*.c),$(if $(HAVE_CL),opencl) $(if $(HAVE_CUPTI),cuda) counters))
$(O)/gen/features.stamp: FORCE
	$(call tft_stamp,$(TFT_PY_VERSION)|$(TFT_INTERCEPTORS))
$(O)/src/cli/main.o: $(O)/gen/features.stamp
$(O)/src/cli/main.o: CFLAGS += -DTFT_BUILD_PYTHON='"$(TFT_PY_VERSION)"' -DTFT_BUILD_INTERCEPTORS='"$(TFT_INTERCEPTORS)"'

# `tftracer record` looks for libtftracer-preload.so next to the binary (the
# build tree), then in LIBDIR (installed).
$(O)/gen/libdir.stamp: FORCE
	$(call tft_stamp,$(LIBDIR))
$(O)/src/cli/record_intercept.o: $(O)/gen/libdir.stamp
$(O)/src/cli/record_intercept.o: CFLAGS += -DTFT_LIBDIR='"$(LIBDIR)"'

$(O)/tftracer.pc: include/tftracer/tftracer.h FORCE
	@mkdir -p $(dir $@)
	@{ printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\n' '$(PREFIX)' '$(LIBDIR)' '$(INCLUDEDIR)'; \
	  printf 'Name: tftracer\nDescription: op-level runtime tracer for deep-learning programs (C runtime API)\n'; \
	  printf 'Version: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -ltftracer\n' '$(VERSION)'; \
	  printf 'Libs.private: %s\n' '$(strip $(LDLIBS))'; } >$@.tmp && mv $@.tmp $@

# Every library the build made ($(O)/lib*.so, $(O)/lib*.a), every public header,
# every man page: found when installing, so that new ones need no change here.
install: all man $(O)/tftracer.pc
	$(if $(VERSION),,$(error cannot read TFT_VERSION_STRING from include/tftracer/tftracer.h))
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/tftracer $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 0755 $(O)/tftracer $(DESTDIR)$(BINDIR)/tftracer
	$(Q)for f in $(O)/lib*.so; do [ ! -e "$$f" ] || $(INSTALL) -m 0644 "$$f" $(DESTDIR)$(LIBDIR)/ || exit 1; done
	$(Q)for f in $(O)/lib*.a; do [ ! -e "$$f" ] || $(INSTALL) -m 0644 "$$f" $(DESTDIR)$(LIBDIR)/ || exit 1; done
	$(INSTALL) -m 0644 $(O)/tftracer.pc $(DESTDIR)$(PKGCONFIGDIR)/tftracer.pc
	$(INSTALL) -m 0644 include/tftracer/*.h $(DESTDIR)$(INCLUDEDIR)/tftracer/
	$(INSTALL) -m 0644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 tools/tftracer-completion.bash $(DESTDIR)$(BASHCOMPDIR)/tftracer
	$(INSTALL) -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	$(Q)if [ -d $(O)/python/tftracer ]; then \
		[ -n "$(PYTHONDIR)" ] || { echo "install: no PYTHONDIR for $(PYTHON)" >&2; exit 1; }; \
		$(INSTALL) -d $(DESTDIR)$(PYTHONDIR)/tftracer && \
		$(INSTALL) -m 0644 $(O)/python/tftracer/*.py $(O)/python/tftracer/*.so $(DESTDIR)$(PYTHONDIR)/tftracer/ && \
		echo "install: the Python module in $(PYTHONDIR)/tftracer"; \
	else echo "install: no Python module (python3-dev missing when it was built)"; fi

# Removes what `install` put there: names this tree builds or installs, and any
# libtftracer* (a library a later build no longer makes); then the folders
# that are tftracer's own.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/tftracer $(DESTDIR)$(PKGCONFIGDIR)/tftracer.pc \
		$(DESTDIR)$(MANDIR)/man1/tftracer.1 $(DESTDIR)$(MANDIR)/man1/tftracer-*.1 \
		$(DESTDIR)$(BASHCOMPDIR)/tftracer \
		$(DESTDIR)$(LIBDIR)/libtftracer*.so $(DESTDIR)$(LIBDIR)/libtftracer*.a \
		$(addprefix $(DESTDIR)$(LIBDIR)/,$(notdir $(wildcard $(O)/lib*.so $(O)/lib*.a)))
	rm -rf $(DESTDIR)$(INCLUDEDIR)/tftracer $(DESTDIR)$(DOCDIR) \
		$(if $(PYTHONDIR),$(DESTDIR)$(PYTHONDIR)/tftracer)

dist:
	$(if $(VERSION),,$(error cannot read TFT_VERSION_STRING from include/tftracer/tftracer.h))
	@mkdir -p $(O)
	git archive --format=tar.gz --prefix=tftracer-$(VERSION)/ -o $(O)/tftracer-$(VERSION).tar.gz HEAD
	@echo "dist: $(O)/tftracer-$(VERSION).tar.gz"

version:
	@echo $(VERSION)

FORCE:
.PHONY: man install uninstall dist version FORCE
# ---- end version, install, packaging -----------------------------------------

# ---- top-level jobs ----------------------------------------------------------
deps:
	$(Q)scripts/install-deps.sh

test: deps
	$(Q)tests/run.sh

bench: deps all
	$(Q)bench/run.sh

demo: deps all
	$(Q)scripts/demo.sh

check-layers:
	$(Q)tools/check_layers.sh

check-size:
	$(Q)tools/check_size.sh

check-symbols: $(O)/libtftracer.a
	$(Q)tools/check_symbols.sh $(O)

clean:
	rm -rf $(O) build-asan build-fuzz

.PHONY: all units fuzz fuzz-build deps test bench demo clean check-layers check-size check-symbols wasm
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(FUZZ_LIB_OBJ:.o=.d)
