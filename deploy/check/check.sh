#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make deploy-check: everything a user installs, checked without a cluster and without root
# (docs/deploy.md):
#   - the kustomize base rendered by kubectl, validated by deploy/check/validate.mjs
#     (kubernetes-models' API schema, plus kqos's own rules), and broken copies rejected;
#   - kqosd --check-config on the ConfigMap's config, deploy/kqosd.json and every example,
#     and a broken config rejected with file:line:column;
#   - promtool check rules and promtool test rules for deploy/prometheus/kqos-rules.yaml;
#   - systemd-analyze verify and security --offline=yes on deploy/kqosd.service, its
#     capabilities = deploy/capabilities, and make install into a DESTDIR.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

OUTPUT=${OUTPUT:-$PWD/.output}
KQOSD=$OUTPUT/kqosd
# The unit's exposure as systemd-analyze scores it (docs/deploy.md: 6.6 before hardening).
MAX_EXPOSURE=${MAX_EXPOSURE:-2.5}
out=$OUTPUT/deploy-check
passed=0
failed=0

ok() {
	passed=$((passed + 1))
	echo "ok $((passed + failed)) - $*"
}

not_ok() {
	failed=$((failed + 1))
	echo "not ok $((passed + failed)) - $*"
}

indent() {
	printf '#   %s\n' "${1//$'\n'/$'\n'#   }"
}

# check WHAT CMD...: CMD's output is shown only when it fails.
check() {
	local what=$1 log
	shift
	if log=$("$@" 2>&1); then
		ok "$what"
	else
		not_ok "$what"
		indent "$log"
	fi
}

# refuse WHAT NEEDLE CMD...: CMD must fail and say NEEDLE.
refuse() {
	local what=$1 needle=$2 log
	shift 2
	if log=$("$@" 2>&1); then
		not_ok "$what: accepted"
	elif ! grep -q -- "$needle" <<<"$log"; then
		not_ok "$what: failed without '$needle'"
		indent "$log"
	else
		ok "$what"
	fi
}

manifests() {
	local f
	check "kubectl kustomize renders deploy/kubernetes/base" \
		sh -c "kubectl kustomize deploy/kubernetes/base >'$out/kqos.yaml'"
	if node deploy/check/validate.mjs "$out/kqos.yaml" deploy/capabilities \
		"$out/configmap-kqosd.json" >"$out/validate.log" 2>&1; then
		ok "manifests valid ($(grep -c '^ok' "$out/validate.log") checks, $out/validate.log)"
	else
		not_ok "manifests invalid"
		grep -v '^ok' "$out/validate.log" | sed 's/^/#   /'
	fi
	# The validator must be able to say no: four broken copies.
	f=$out/bad.yaml
	sed 's/readOnlyRootFilesystem: true/readOnlyRootFilesystem: 7/' "$out/kqos.yaml" >"$f"
	refuse "validator rejects a wrong type (readOnlyRootFilesystem: 7)" "must be boolean" \
		node deploy/check/validate.mjs "$f" deploy/capabilities
	grep -v -- '- DAC_READ_SEARCH' "$out/kqos.yaml" >"$f"
	refuse "validator rejects a capability set other than deploy/capabilities" \
		"adds exactly" node deploy/check/validate.mjs "$f" deploy/capabilities
	sed 's/privileged: false/privileged: true/' "$out/kqos.yaml" >"$f"
	refuse "validator rejects privileged: true" "not privileged" \
		node deploy/check/validate.mjs "$f" deploy/capabilities
	sed "s/^  - nodeslos$/  - nodeslos\n  - nodemetrics/" "$out/kqos.yaml" >"$f"
	refuse "validator rejects RBAC beyond nodeslos in slo.koordinator.sh" "nodeslos only" \
		node deploy/check/validate.mjs "$f" deploy/capabilities
}

configs() {
	local f
	for f in "$out/configmap-kqosd.json" deploy/kubernetes/base/kqosd.json deploy/kqosd.json \
		deploy/examples/*.json; do
		check "kqosd --check-config ${f#"$OUTPUT"/}" "$KQOSD" --check-config "$f"
	done
	printf '{\n  "interval": "500ms",\n  "export": {"textfileDirr": "/tmp"}\n}\n' >"$out/bad.json"
	refuse "kqosd --check-config rejects a typo with file:line:column" "bad.json:3:14" \
		"$KQOSD" --check-config "$out/bad.json"
}

rules() {
	check "promtool check rules deploy/prometheus/kqos-rules.yaml" \
		promtool check rules deploy/prometheus/kqos-rules.yaml
	check "promtool test rules: one test per alert" \
		promtool test rules deploy/prometheus/kqos-rules.test.yaml
	local alert missing=
	while read -r alert; do
		grep -q "alertname: $alert$" deploy/prometheus/kqos-rules.test.yaml ||
			missing="$missing $alert"
	done < <(sed -n 's/^ *- alert: *//p' deploy/prometheus/kqos-rules.yaml)
	check "every alert has a test${missing:+ (missing:$missing)}" test -z "$missing"
	check "kqos-rules.test.yaml is what gen-tests.py writes" \
		sh -c 'deploy/prometheus/gen-tests.py | cmp - deploy/prometheus/kqos-rules.test.yaml'
}

# The unit as installed with the binary at $1 (verify wants ExecStart to exist).
unit_for() {
	sed "s|/usr/local/sbin/kqosd|$1|" deploy/kqosd.service >"$out/unit/kqosd.service"
}

systemd_unit() {
	local score caps want
	mkdir -p "$out/unit"
	unit_for "$KQOSD"
	check "systemd-analyze verify deploy/kqosd.service" \
		sh -c "systemd-analyze verify '$out/unit/kqosd.service' 2>&1 | (! grep .)"
	systemd-analyze security --offline=yes "$out/unit/kqosd.service" >"$out/security.txt" 2>&1
	score=$(sed -n 's/.*Overall exposure level for kqosd.service: \([0-9.]*\).*/\1/p' \
		"$out/security.txt")
	check "systemd-analyze security --offline=yes: exposure ${score:-?} <= $MAX_EXPOSURE" \
		awk -v s="${score:-99}" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(s <= m) }'
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' deploy/kqosd.service | tr ' ' '\n' | sort)
	want=$(grep -v '^#' deploy/capabilities | sort)
	check "CapabilityBoundingSet = deploy/capabilities" test "$caps" = "$want"
}

install_tree() {
	local d=$out/destdir
	rm -rf "$d"
	check "make install PREFIX=/usr DESTDIR=..." \
		make --no-print-directory install PREFIX=/usr DESTDIR="$d" OUTPUT="$OUTPUT"
	check "installed: kqosd, kqos-top, unit, config, examples, docs" test -x \
		"$d/usr/sbin/kqosd" -a -x "$d/usr/sbin/kqos-top" -a \
		-f "$d/etc/systemd/system/kqosd.service" -a -f "$d/etc/kqos/kqosd.json" -a \
		-f "$d/usr/share/kqos/examples/bare-metal.json" -a -f "$d/usr/share/doc/kqos/deploy.md"
	check "installed unit runs /usr/sbin/kqosd" \
		grep -q '^ExecStart=/usr/sbin/kqosd ' "$d/etc/systemd/system/kqosd.service"
	echo '{"interval": "2s"}' >"$d/etc/kqos/kqosd.json"
	make --no-print-directory install PREFIX=/usr DESTDIR="$d" OUTPUT="$OUTPUT" >/dev/null 2>&1
	check "a second install keeps the admin's /etc/kqos/kqosd.json" \
		grep -q '"2s"' "$d/etc/kqos/kqosd.json"
}

main() {
	mkdir -p "$out"
	[ -x "$KQOSD" ] || { not_ok "$KQOSD not built"; exit 1; }
	[ -d deploy/check/node_modules/kubernetes-models ] ||
		{ not_ok "deploy/check/node_modules: run make deploy-check (npm ci)"; exit 1; }
	manifests
	configs
	rules
	systemd_unit
	install_tree
	echo "$passed passed, $failed failed"
	[ $failed -eq 0 ]
}

main "$@"
