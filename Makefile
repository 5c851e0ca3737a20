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

# Library layers, bottom to top. Each folder is one layer (see ARCHITECTURE.md).
LAYERS  := core codec store collect analyze export
LIB_SRC := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
CLI_SRC := $(wildcard src/cli/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(O)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/%.o)

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
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/tests/%: tests/unit/%.c tests/lib/tap.h $(O)/libtftracer.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib -o $@ $< $(O)/libtftracer.a $(LDFLAGS) $(LDLIBS)

units: $(TEST_BIN)

# ---- fuzzing (clang + libFuzzer, ASan+UBSan) --------------------------------
FUZZ_SRC := $(wildcard fuzz/fuzz_*.c)
FUZZ_O   := build-fuzz
FUZZ_BIN := $(FUZZ_SRC:fuzz/%.c=$(FUZZ_O)/%)
FUZZ_SECONDS ?= 60

$(FUZZ_O)/%: fuzz/%.c $(LIB_SRC) $(wildcard src/*/*.h)
	@mkdir -p $(dir $@)
	$(Q)clang -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -Isrc \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o $@ $< $(LIB_SRC) $(LDLIBS)

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
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
