#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the engine's default seccomp profile with bpf and perf_event_open allowed under
CAP_BPF and CAP_PERFMON, as containerd's RuntimeDefault does. podman 4.3's default
(containers-common) allows both only with CAP_SYS_ADMIN, which kqos does not otherwise need.
Every other rule stays as the engine ships it.
    deploy/image/seccomp.py [DEFAULT_PROFILE] > kqosd-seccomp.json
"""
import json
import sys

OURS = {"bpf": ["CAP_SYS_ADMIN", "CAP_BPF"], "perf_event_open": ["CAP_SYS_ADMIN", "CAP_PERFMON"]}


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/containers/seccomp.json"
    with open(src, encoding="utf-8") as f:
        prof = json.load(f)
    rules = []
    for rule in prof["syscalls"]:
        names = [n for n in rule.get("names", []) if n not in OURS]
        if names:
            rule["names"] = names
            rules.append(rule)
    for name, caps in OURS.items():
        for cap in caps:
            rules.append({"names": [name], "action": "SCMP_ACT_ALLOW",
                          "includes": {"caps": [cap]}, "excludes": {}})
    prof["syscalls"] = rules
    json.dump(prof, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
