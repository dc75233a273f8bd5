# SPDX-License-Identifier: GPL-2.0
#
# One non-recursive Makefile on the libbpf-bootstrap pattern:
#   bpf/*.bpf.c -> clang -target bpf -> bpftool gen object -> bpftool gen skeleton -> user space.
# Everything built lands under $(OUTPUT). `make help` lists the targets and knobs.
#
# `run` and `test` first call scripts/deps.sh (idempotent) and then re-enter this Makefile, so the
# pkg-config queries below run only once the packages exist.

SANITIZE ?= 0
ifeq ($(SANITIZE),1)
OUTPUT ?= $(abspath .output-san)
else
OUTPUT ?= $(abspath .output)
endif

CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
AR ?= ar
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/')
VMLINUX_H ?= vmlinux/$(ARCH)/vmlinux.h
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo unknown)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(patsubst $(OUTPUT)/%,%,$(2))";
endif

PKGS := libbpf jansson libcurl
WARN := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes -Wformat=2 -Wundef \
	-Wmissing-field-initializers -Wno-unused-parameter
HARDEN := -fstack-protector-strong -fPIE
LDHARDEN := -pie -Wl,-z,relro,-z,now
ifeq ($(SANITIZE),1)
OPT := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDSAN := -fsanitize=address,undefined
else
OPT := -O2 -D_FORTIFY_SOURCE=2
LDSAN :=
endif
ifeq ($(WERROR),1)
WARN += -Werror
endif

CFLAGS := -std=gnu11 -g $(OPT) $(WARN) $(HARDEN) -DKQOS_VERSION='"$(VERSION)"' \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(EXTRA_CFLAGS)
LDFLAGS := $(LDHARDEN) $(LDSAN) $(EXTRA_LDFLAGS)
# libpfm4 and libcurl are dlopen()ed where they are used (user/collect/pmu.c,
# user/kube/kube_client.c), not linked: their resident text was a third of the agent's RSS.
LDLIBS = $(shell pkg-config --libs libbpf jansson 2>/dev/null) -lelf -lz -lm
TEST_LDLIBS = $(LDLIBS) -lcriterion

# Clang's own system include dirs, added with -idirafter so BPF sees asm/ headers (bootstrap).
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf \
	-Wall -Wno-unused-function $(CLANG_BPF_SYS_INCLUDES)

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_HDRS := $(wildcard bpf/*.h) $(VMLINUX_H)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))

# One folder per layer (docs/architecture.md). Each layer sees only its own headers and those
# of the layers below it, so an upward include does not compile. log.h lives in user/ with the
# agent; scripts/check-layers.sh (make style) keeps the stages from including the agent's own
# headers through that path.
#
#   layer       sources              may include
MODEL_INC := -Iuser/model -Ibpf
CGROUP_INC := -Iuser/cgroup $(MODEL_INC)
RESCTRL_INC := -Iresctrl
KUBE_INC := -Iuser/kube
STRAT_INC := -Istrategies $(MODEL_INC)
COLLECT_INC := -Iuser/collect -Iuser $(CGROUP_INC) $(RESCTRL_INC) $(KUBE_INC) -I$(OUTPUT)
ACTUATE_INC := -Iuser/actuate -Iuser $(STRAT_INC) $(CGROUP_INC) $(RESCTRL_INC) $(KUBE_INC)
EXPORT_INC := -Iuser/export -Iuser $(MODEL_INC)
TOP_INC := -Iuser/top -Iuser/export $(MODEL_INC)
AGENT_INC := -Iuser -Iuser/collect -Iuser/actuate -Iuser/export $(STRAT_INC) $(CGROUP_INC) \
	$(RESCTRL_INC) $(KUBE_INC) -I$(OUTPUT)
TEST_INC := $(AGENT_INC) -Iuser/top -Itests/lib

KQOSD_SRCS := user/main.c
AGENT_SRCS := user/agent.c user/react.c user/opts.c user/config.c
LOG_SRCS := user/log.c
COLLECT_SRCS := $(wildcard user/collect/*.c)
ACTUATE_SRCS := $(wildcard user/actuate/*.c)
EXPORT_SRCS := $(wildcard user/export/*.c)
TOP_SRCS := $(wildcard user/top/*.c)
MODEL_SRCS := $(wildcard user/model/*.c)
CGROUP_SRCS := $(wildcard user/cgroup/*.c)
RESCTRL_SRCS := $(wildcard resctrl/*.c)
KUBE_SRCS := $(wildcard user/kube/*.c)
STRAT_SRCS := $(wildcard strategies/*.c)
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
LIVE_SRCS := $(wildcard tests/live/test_*.c)

obj = $(patsubst %.c,$(OUTPUT)/%.o,$(1))
lib = $(OUTPUT)/lib$(1).a
# Dependency order, users first: the linker resolves each archive against the ones after it.
LIBS := $(foreach l,agent collect actuate export strategies cgroup resctrl kube model log,$(call lib,$(l)))
TOP_LIBS := $(foreach l,model log,$(call lib,$(l)))
LIBTEST := $(call lib,testhelp)

KQOSD := $(OUTPUT)/kqosd
KQOSTOP := $(if $(TOP_SRCS),$(OUTPUT)/kqos-top)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%,$(UNIT_SRCS))
LIVE_BINS := $(patsubst tests/live/%.c,$(OUTPUT)/tests/live/%,$(LIVE_SRCS))

# The FUSE resctrl fake (tests/fuse/, scripts/fake-resctrl-fs.sh): only where libfuse3 is.
# Defined before the rules that list it: make expands prerequisites as it reads them.
FUSE_CFLAGS := $(shell pkg-config --cflags fuse3 2>/dev/null)
FUSE_LIBS := $(shell pkg-config --libs fuse3 2>/dev/null)
FAKEFS := $(if $(FUSE_LIBS),$(OUTPUT)/tests/fuse/kqos-fake-resctrl-fs)

RUN_ARGS ?=

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all kqosd kqos-top tests deps run test _run _test test-unit test-live test-faults style \
	vmlinux bench clean help fakefs

all: $(KQOSD) $(KQOSTOP)
kqosd: $(KQOSD)
kqos-top: $(KQOSTOP)
tests: $(UNIT_BINS) $(LIVE_BINS)

deps:
	$(Q)scripts/deps.sh

run: deps
	$(Q)$(MAKE) --no-print-directory _run

_run: $(KQOSD)
	$(KQOSD) $(RUN_ARGS)

test: deps
	$(Q)$(MAKE) --no-print-directory _test

_test: tests $(KQOSD) $(KQOSTOP) $(FAKEFS)
	$(Q)OUTPUT=$(OUTPUT) scripts/run-tests.sh $(UNIT_BINS) $(LIVE_BINS)

test-unit: $(UNIT_BINS) $(KQOSD) $(KQOSTOP)
	$(Q)OUTPUT=$(OUTPUT) scripts/run-tests.sh $(UNIT_BINS)

test-live: $(LIVE_BINS) $(KQOSD) $(KQOSTOP) $(FAKEFS)
	$(Q)OUTPUT=$(OUTPUT) scripts/run-tests.sh $(LIVE_BINS)

# Faults injected against kqosd (docs/testing.md "Faults"); part of test-live and test too.
FAULT_BINS := $(filter $(OUTPUT)/tests/live/test_faults_%,$(LIVE_BINS))
test-faults: $(FAULT_BINS) $(KQOSD) $(FAKEFS)
	$(Q)OUTPUT=$(OUTPUT) scripts/run-tests.sh $(FAULT_BINS)

style:
	$(Q)scripts/check-style.sh

vmlinux:
	$(Q)scripts/gen-vmlinux.sh $(ARCH)

bench: $(KQOSD)
	$(Q)OUTPUT=$(OUTPUT) bench/overhead.sh

include bench/bench.mk

# --- BPF ---------------------------------------------------------------------------------------
$(OUTPUT)/bpf/%.tmp.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bpf/%.bpf.o: $(OUTPUT)/bpf/%.tmp.bpf.o
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

$(OUTPUT)/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# --- user space --------------------------------------------------------------------------------
$(call obj,$(KQOSD_SRCS) $(AGENT_SRCS)): INC := $(AGENT_INC)
$(call obj,$(LOG_SRCS)): INC := -Iuser
$(call obj,$(COLLECT_SRCS)): INC := $(COLLECT_INC)
$(call obj,$(ACTUATE_SRCS)): INC := $(ACTUATE_INC)
$(call obj,$(EXPORT_SRCS)): INC := $(EXPORT_INC)
$(call obj,$(TOP_SRCS)): INC := $(TOP_INC)
$(call obj,$(MODEL_SRCS)): INC := $(MODEL_INC)
$(call obj,$(CGROUP_SRCS)): INC := $(CGROUP_INC)
$(call obj,$(RESCTRL_SRCS)): INC := $(RESCTRL_INC)
$(call obj,$(KUBE_SRCS)): INC := $(KUBE_INC)
$(call obj,$(STRAT_SRCS)): INC := $(STRAT_INC)
$(call obj,$(TESTLIB_SRCS) $(UNIT_SRCS) $(LIVE_SRCS)): INC := $(TEST_INC)

C_OBJS = $(call obj,$(KQOSD_SRCS) $(AGENT_SRCS) $(LOG_SRCS) $(COLLECT_SRCS) $(ACTUATE_SRCS) \
	$(EXPORT_SRCS) $(TOP_SRCS) $(MODEL_SRCS) $(CGROUP_SRCS) $(RESCTRL_SRCS) $(KUBE_SRCS) \
	$(STRAT_SRCS) $(TESTLIB_SRCS) $(UNIT_SRCS) $(LIVE_SRCS))
$(C_OBJS): $(OUTPUT)/%.o: %.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(INC) -MMD -MP -c $< -o $@

$(call lib,agent): $(call obj,$(AGENT_SRCS))
$(call lib,log): $(call obj,$(LOG_SRCS))
$(call lib,collect): $(call obj,$(COLLECT_SRCS))
$(call lib,actuate): $(call obj,$(ACTUATE_SRCS))
$(call lib,export): $(call obj,$(EXPORT_SRCS))
$(call lib,model): $(call obj,$(MODEL_SRCS))
$(call lib,cgroup): $(call obj,$(CGROUP_SRCS))
$(call lib,resctrl): $(call obj,$(RESCTRL_SRCS))
$(call lib,kube): $(call obj,$(KUBE_SRCS))
$(call lib,strategies): $(call obj,$(STRAT_SRCS))
$(LIBTEST): $(call obj,$(TESTLIB_SRCS))
$(OUTPUT)/lib%.a:
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

link = $(CC) $(LDFLAGS) $(filter %.o,$^) $(filter %.a,$^)

$(KQOSD): $(call obj,$(KQOSD_SRCS)) $(LIBS)
	$(call msg,BINARY,$@)
	$(Q)$(link) $(LDLIBS) -o $@

$(OUTPUT)/kqos-top: $(call obj,$(TOP_SRCS)) $(TOP_LIBS)
	$(call msg,BINARY,$@)
	$(Q)$(link) $(LDLIBS) $(shell pkg-config --libs ncursesw 2>/dev/null) -o $@

# Test helpers (fakes) sit above every layer they fake.
$(OUTPUT)/tests/%: $(OUTPUT)/tests/%.o $(LIBTEST) $(LIBS)
	$(call msg,TEST,$@)
	$(Q)$(link) $(TEST_LDLIBS) -o $@
# kqos-top is no library: its test links the snapshot parser to check it on its own
$(OUTPUT)/tests/unit/test_top: $(call obj,user/top/top_model.c)


fakefs: $(FAKEFS)

$(OUTPUT)/tests/fuse/kqos-fake-resctrl-fs: tests/fuse/resctrl_fs.c $(LIBTEST) $(LIBS)
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(TEST_INC) $(FUSE_CFLAGS) $< -o $@ $(LDFLAGS) $(LIBTEST) $(LIBS) \
		$(FUSE_LIBS) $(LDLIBS)

$(OUTPUT)/bpf:
	$(Q)mkdir -p $@

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf .output .output-san

help:
	@echo 'kqos build'
	@echo '  make run        install dependencies, build, run kqosd with the built-in config'
	@echo '                  (RUN_ARGS="--once --format json" passes flags)'
	@echo '  make test       install dependencies, build, run unit and live tests'
	@echo '  make all        build kqosd and kqos-top into $$(OUTPUT) (.output)'
	@echo '  make test-unit  unit tests only (no root)'
	@echo '  make test-live  live tests only (root, BPF, real cgroups)'
	@echo '  make test-faults  faults injected against kqosd (root; part of test-live)'
	@echo '  make bench      bench/overhead.sh: kqos vs runqlat, printed, not asserted'
	@echo '  make style      clang-format check, shellcheck'
	@echo '  make vmlinux    regenerate vmlinux/$$(ARCH)/vmlinux.h from /sys/kernel/btf/vmlinux'
	@echo '  make clean'
	@echo '  make help-deploy  image, image-test, deploy-check, install'
	@echo 'knobs: V=1 (show commands) WERROR=1 (-Werror) SANITIZE=1 (ASan+UBSan, .output-san)'

include deploy/deploy.mk
include tests/fuzz/fuzz.mk

-include $(wildcard $(OUTPUT)/*/*.d $(OUTPUT)/*/*/*.d $(OUTPUT)/*/*/*/*.d)
