#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The layering the include paths cannot see (docs/architecture.md): the stages reach user/
# only for log.h, and the pure layers (user/model, strategies) open no file, read no BPF map
# and read no clock.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
rc=0
agent_headers='agent\.h|opts\.h|config\.h'
if grep -nE "^#include \"($agent_headers)\"" user/*/*.[ch] strategies/*.[ch] resctrl/*.[ch]; then
	echo "layers: a stage includes the agent's own headers (only log.h is shared)" >&2
	rc=1
fi
pure='(\bopen|fopen|opendir|openat|\bstat|statfs|bpf_[a-z_]+|clock_gettime|\btime|gettimeofday|sysconf)\('
if grep -nE "$pure" user/model/*.[ch] strategies/*.[ch] | grep -vE '^[^:]+:[0-9]+:\s*(/?\*|//)'; then
	echo "layers: user/model and strategies/ are pure: no files, BPF or clock" >&2
	rc=1
fi
[ $rc -eq 0 ] && echo "layers: clean"
exit $rc
