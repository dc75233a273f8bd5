// SPDX-License-Identifier: GPL-2.0
// The DaemonSet's pod as podman run flags, one per line, for make image-test:
//   node podman-flags.mjs RENDERED.yaml
// hostPID/hostNetwork, read-only root, no privilege escalation, the capabilities, the memory
// limit, the env (fieldRef values are the node's), and every volumeMount as -v HOST:PATH[:opts]
// with the volume's hostPath; a ConfigMap volume prints CONFIGMAP:PATH (the test supplies the
// directory). Anything it cannot translate is an error, so the test cannot silently drift.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { parseAllDocuments } from "yaml";

const objs = parseAllDocuments(readFileSync(process.argv[2], "utf8")).map((d) => d.toJS());
const ds = objs.find((o) => o?.kind === "DaemonSet");
const pod = ds.spec.template.spec;
const c = pod.containers[0];
const sc = c.securityContext ?? {};
const flags = [];
const fail = (why) => {
  console.error(`podman-flags: ${why}`);
  process.exit(1);
};

if (pod.containers.length !== 1) fail("one container expected");
if (pod.hostPID) flags.push("--pid=host");
if (pod.hostNetwork) flags.push("--network=host");
if (sc.privileged) flags.push("--privileged");
if (sc.readOnlyRootFilesystem) flags.push("--read-only");
if (sc.allowPrivilegeEscalation === false) flags.push("--security-opt=no-new-privileges");
if (sc.runAsUser !== undefined) flags.push(`--user=${sc.runAsUser}`);
for (const cap of sc.capabilities?.drop ?? []) flags.push(`--cap-drop=${cap.toLowerCase()}`);
for (const cap of sc.capabilities?.add ?? []) flags.push(`--cap-add=CAP_${cap}`);
const mem = c.resources?.limits?.memory;
if (mem) {
  const m = /^(\d+)(Mi|Gi)$/.exec(mem) ?? fail(`memory limit ${mem}`);
  flags.push(`--memory=${m[1]}${m[2] === "Mi" ? "m" : "g"}`);
}
if (pod.terminationGracePeriodSeconds)
  flags.push(`--stop-timeout=${pod.terminationGracePeriodSeconds}`);
for (const e of c.env ?? []) {
  const ref = e.valueFrom?.fieldRef?.fieldPath;
  if (ref === "spec.nodeName") flags.push(`--env=${e.name}=${hostname()}`);
  else if (e.value !== undefined) flags.push(`--env=${e.name}=${e.value}`);
  else fail(`env ${e.name}: cannot translate`);
}
const vols = new Map(pod.volumes.map((v) => [v.name, v]));
for (const m of c.volumeMounts ?? []) {
  const v = vols.get(m.name) ?? fail(`volume ${m.name} missing`);
  const opts = [];
  if (m.readOnly) opts.push("ro");
  if (m.mountPropagation === "HostToContainer") opts.push("rslave");
  else if (m.mountPropagation === "Bidirectional") opts.push("rshared");
  const src = v.hostPath ? v.hostPath.path : v.configMap ? "CONFIGMAP" : fail(`volume ${m.name}`);
  flags.push(`--volume=${src}:${m.mountPath}${opts.length ? ":" + opts.join(",") : ""}`);
}
console.log(flags.join("\n"));
