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

# Library layers, bottom to top. Each folder is one layer (see ARCHITECTURE.md).
LAYERS  := core codec store collect runtime analyze export server
LIB_SRC := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
CLI_SRC := $(wildcard src/cli/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(O)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/%.o)

# ---- server ------------------------------------------------------------------
# The HTTP server links libmicrohttpd. The web UI (every file under web/) is
# embedded by tools/pack_assets into the generated $(O)/gen/assets.c, which
# joins the library; the binary then needs no files on disk.
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

$(ASSETS_C): $(O)/tools/pack_assets $(WEB_FILES) $(WEB_DIRS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  GEN     $@")
	$(Q)$(O)/tools/pack_assets web $@.tmp && mv $@.tmp $@

$(O)/gen/assets.o: $(ASSETS_C) src/server/assets.h
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -c $< -o $@

$(O)/bench/bench_viewport: bench/bench_viewport.c $(O)/libtftracer.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(O)/libtftracer.a $(LDFLAGS) $(LDLIBS)

server-tools: $(O)/bench/bench_viewport
.PHONY: server-tools
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
SO_SRC      := $(foreach l,$(SO_LAYERS),$(wildcard src/$(l)/*.c))
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

# ---- python ------------------------------------------------------------------
# The Python module `tftracer` (python/tftracer, docs/python.md): _tftracer.c
# against the CPython API of $(PYTHON), linked with libtftracer.a (nothing
# else needed at run time), plus the package's .py files, in $(O)/python:
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

$(PY_MOD): $(O)/python/_tftracer.o $(O)/libtftracer.a
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(CC) -shared -o $@ $< $(O)/libtftracer.a -Wl,--exclude-libs,ALL $(LDFLAGS) $(LDLIBS)

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

$(O)/tftracer: $(CLI_OBJ) $(O)/libtftracer.a
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CLI_LDLIBS)

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

clean:
	rm -rf $(O) build-asan build-fuzz

.PHONY: all units fuzz fuzz-build deps test bench demo clean check-layers
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(FUZZ_LIB_OBJ:.o=.d)
