# SPDX-License-Identifier: GPL-2.0
#
# libFuzzer harnesses (docs/testing.md, "Fuzzing"). Included from the top-level Makefile, whose
# TEST_INC (every layer's headers), WARN, PKGS and LDLIBS it reuses. Everything lands under
# $(FUZZ_OUT), built by clang with ASan+UBSan; the project sources go into one archive so that
# each harness links only what it calls, and headers are included by name so that files can
# move between folders.
#
#   make fuzz                    every harness for FUZZ_SECONDS (10) against a copy of its corpus
#   make fuzz FUZZ_SECONDS=600   longer
#   make fuzz-build              build only
#   $(FUZZ_OUT)/fuzz_pod -runs=10000000 tests/fuzz/corpus/fuzz_pod   one harness by hand

FUZZ_CC ?= clang
FUZZ_OUT ?= $(abspath .output-fuzz)
FUZZ_SECONDS ?= 10
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
# clang reads two of gcc's warnings more strictly: `{ NULL }` table terminators and the logger's
# vprintf of a caller's format. Both are deliberate; gcc still checks the rest.
FUZZ_WARN := $(WARN) -Wno-missing-field-initializers -Wno-format-nonliteral
FUZZ_CFLAGS := -std=gnu11 -g -O1 -fno-omit-frame-pointer $(FUZZ_SAN) $(FUZZ_WARN) $(TEST_INC) \
	-Itests/fuzz -DKQOS_VERSION='"fuzz"' $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

# Every project source except those with a main() and the curses view, found by content rather
# than by name so that moving files between folders needs no change here.
FUZZ_PROJ_SRCS := $(shell find user resctrl strategies -name '*.c' 2>/dev/null | sort \
	| xargs grep -L -e '^int main\>' -e '<curses.h>')
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_UTIL := tests/fuzz/fuzz_util.c
FUZZ_HARNESS_SRCS := $(filter-out $(FUZZ_UTIL),$(FUZZ_SRCS))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_OUT)/%,$(FUZZ_HARNESS_SRCS))
FUZZ_LIB := $(FUZZ_OUT)/libkqos-fuzz.a

fuzz_obj = $(patsubst %.c,$(FUZZ_OUT)/%.o,$(1))

.PHONY: fuzz _fuzz fuzz-build

fuzz-build: $(FUZZ_BINS)

# Like `test`: install the packages first, then re-enter so the pkg-config queries see them.
fuzz: deps
	$(Q)$(MAKE) --no-print-directory _fuzz

_fuzz: $(FUZZ_BINS)
	$(Q)FUZZ_OUT=$(FUZZ_OUT) FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh $(FUZZ_BINS)

# The project objects are instrumented for coverage without libFuzzer's main; the harnesses
# link it.
$(call fuzz_obj,$(FUZZ_PROJ_SRCS)): $(FUZZ_OUT)/%.o: %.c | $(SKELS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(call fuzz_obj,$(FUZZ_SRCS)): $(FUZZ_OUT)/%.o: %.c | $(SKELS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_LIB): $(call fuzz_obj,$(FUZZ_PROJ_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(FUZZ_OUT)/fuzz_%: $(FUZZ_OUT)/tests/fuzz/fuzz_%.o $(call fuzz_obj,$(FUZZ_UTIL)) $(FUZZ_LIB)
	$(call msg,FUZZER,$@)
	$(Q)$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) $(filter %.o,$^) -Wl,--start-group \
		$(FUZZ_LIB) -Wl,--end-group $(LDLIBS) -o $@

-include $(wildcard $(FUZZ_OUT)/*/*.d $(FUZZ_OUT)/*/*/*.d $(FUZZ_OUT)/*/*/*/*.d)

.PHONY: fuzz-clean
fuzz-clean:
	$(Q)rm -rf $(FUZZ_OUT)
