# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks beyond `make bench` (bench/overhead.sh), included from the top-level Makefile.
#
#   make bench-tools          build the interference bench's helpers into $(OUTPUT)/bench/
#   make bench-interference   build kqosd and the helpers, then run bench/interference.sh as root
#                             (ROUNDS=, DURATION=, ... pass through the environment; bench/README.md)
#   make soak                 build kqosd and soakload, then run bench/soak.sh as root: the churn
#                             soak (DURATION=, CGROUPS=, ...; bench/README.md, docs/testing.md)

BENCH_TOOLS := $(OUTPUT)/bench/lsprobe $(OUTPUT)/bench/knobwatch $(OUTPUT)/bench/scaleload \
	$(OUTPUT)/bench/mapfloor $(OUTPUT)/bench/buildbench

.PHONY: bench-tools bench-interference

bench-tools: $(BENCH_TOOLS)

bench-interference: $(KQOSD) $(BENCH_TOOLS)
	$(Q)OUTPUT=$(OUTPUT) bench/interference.sh

$(OUTPUT)/bench/%: bench/%.c
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -pthread $< -o $@

# mapfloor creates and reads BPF maps itself: it links libbpf.
$(OUTPUT)/bench/mapfloor: bench/mapfloor.c
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LDLIBS) -o $@

# buildbench times the snapshot build alone: it links the pure model library.
$(OUTPUT)/bench/buildbench: bench/buildbench.c $(OUTPUT)/libmodel.a
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(MODEL_INC) $(LDFLAGS) $< $(OUTPUT)/libmodel.a $(LDLIBS) -o $@

# make bench-scale: kqosd's own CPU and RSS at 100/1000/5000 running cgroups (bench/scale.sh;
# ROUNDS=, SIZES=, INTERVALS=, BASE= or BASE_REV= pass through the environment).
.PHONY: bench-scale
bench-scale: $(KQOSD) $(OUTPUT)/bench/scaleload $(OUTPUT)/bench/mapfloor
	$(Q)OUTPUT=$(OUTPUT) bench/scale.sh

# The churn soak (bench/soak.sh): the load and recorder link the soak (and fileio) helpers of
# tests/lib alone.
SOAKLOAD := $(OUTPUT)/bench/soakload

.PHONY: soak

soak: $(KQOSD) $(SOAKLOAD)
	$(Q)OUTPUT=$(OUTPUT) bench/soak.sh

$(SOAKLOAD): bench/soakload.c $(OUTPUT)/tests/lib/soak.o $(OUTPUT)/tests/lib/fileio.o
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $(LDFLAGS) -pthread $^ -o $@ $(LDLIBS)
