// SPDX-License-Identifier: GPL-2.0
// Validate kqos's rendered manifests without a cluster (make deploy-check):
//   node validate.mjs RENDERED.yaml CAPABILITIES_FILE [CONFIG_OUT]
// 1. every object against the Kubernetes API schema (kubernetes-models' validators: types,
//    required fields, enums, formats; like the API server they do not reject unknown fields);
// 2. what the schema cannot say about kqos: no privileged, exactly the capabilities of
//    deploy/capabilities, read-only root, probes on kqos-top --check, every mount backed by a
//    volume, the ConfigMap present and the config key kqosd reads. With CONFIG_OUT the
//    ConfigMap's kqosd.json is written there for kqosd --check-config.
// Prints one "ok"/"not ok" line per check; exits 1 if any failed.
import { readFileSync, writeFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { Namespace, ServiceAccount, ConfigMap } from "kubernetes-models/v1";
import { DaemonSet } from "kubernetes-models/apps/v1";
import { ClusterRole, ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";

const MODELS = { Namespace, ServiceAccount, ConfigMap, DaemonSet, ClusterRole, ClusterRoleBinding };
const [file, capsFile, configOut] = process.argv.slice(2);
let failed = 0;
let n = 0;

function check(ok, what, why = "") {
  n++;
  if (ok) {
    console.log(`ok ${n} - ${what}`);
  } else {
    failed++;
    console.log(`not ok ${n} - ${what}${why ? ": " + why : ""}`);
  }
}

function schema(obj) {
  const id = `${obj.kind}/${obj.metadata?.name}`;
  const Model = MODELS[obj.kind];
  if (!Model) {
    check(false, `${id}: schema`, `kind ${obj.kind} not expected in kqos's manifests`);
    return;
  }
  try {
    new Model(obj).validate();
    check(obj.apiVersion === Model.apiVersion, `${id}: valid ${Model.apiVersion} ${obj.kind}`,
      `apiVersion ${obj.apiVersion}`);
  } catch (e) {
    check(false, `${id}: valid ${Model.apiVersion} ${obj.kind}`, e.message);
  }
}

const sameSet = (a, b) => a.length === b.length && [...a].sort().join() === [...b].sort().join();

function daemonSet(ds, objs, caps) {
  const pod = ds.spec?.template?.spec ?? {};
  const c = (pod.containers ?? [])[0] ?? {};
  const sc = c.securityContext ?? {};
  const add = (sc.capabilities?.add ?? []).map((x) => (x.startsWith("CAP_") ? x : "CAP_" + x));
  check(!sc.privileged, "DaemonSet: not privileged");
  check(sc.allowPrivilegeEscalation === false, "DaemonSet: allowPrivilegeEscalation false");
  check(sc.readOnlyRootFilesystem === true, "DaemonSet: read-only root filesystem");
  check(sameSet(sc.capabilities?.drop ?? [], ["ALL"]), "DaemonSet: drops ALL capabilities");
  check(sameSet(add, caps), "DaemonSet: adds exactly deploy/capabilities",
    `adds [${add}], want [${caps}]`);
  check(pod.hostPID === true, "DaemonSet: hostPID (BPF and resctrl use host PIDs)");
  for (const p of ["livenessProbe", "readinessProbe"]) {
    const cmd = c[p]?.exec?.command ?? [];
    check(cmd[0] === "/usr/bin/kqos-top" && cmd.includes("--check"),
      `DaemonSet: ${p} runs kqos-top --check`, JSON.stringify(cmd));
  }
  check(c.resources?.limits?.memory && c.resources?.requests?.memory,
    "DaemonSet: memory request and limit set");
  const vols = new Map((pod.volumes ?? []).map((v) => [v.name, v]));
  for (const m of c.volumeMounts ?? [])
    check(vols.has(m.name), `DaemonSet: mount ${m.mountPath} has volume ${m.name}`);
  const used = new Set((c.volumeMounts ?? []).map((m) => m.name));
  for (const name of vols.keys()) check(used.has(name), `DaemonSet: volume ${name} is mounted`);
  const cmName = [...vols.values()].find((v) => v.configMap)?.configMap?.name;
  const cm = objs.find((o) => o.kind === "ConfigMap" && o.metadata?.name === cmName);
  check(cm, `DaemonSet: ConfigMap ${cmName} is in the manifests`);
  const cfgPath = c.args?.[c.args.indexOf("--config") + 1] ?? "";
  const mount = (c.volumeMounts ?? []).find((m) => m.name === "config");
  const key = cfgPath.slice((mount?.mountPath ?? "") .length + 1);
  check(mount && cfgPath.startsWith(mount.mountPath + "/") && cm?.data?.[key],
    `DaemonSet: --config ${cfgPath} is a key of the ConfigMap`);
  const sa = pod.serviceAccountName;
  check(objs.some((o) => o.kind === "ServiceAccount" && o.metadata?.name === sa),
    `DaemonSet: service account ${sa} exists`);
  return cm?.data?.[key];
}

function rbac(objs) {
  const role = objs.find((o) => o.kind === "ClusterRole");
  const res = (role?.rules ?? []).flatMap((r) => r.resources ?? []);
  check(res.includes("nodes/proxy"), "ClusterRole: nodes/proxy (kubelet /pods)");
  /* the NodeSLO source: get/list/watch on nodeslos alone, in their group alone */
  const slo = (role?.rules ?? []).filter((r) => (r.apiGroups ?? []).includes("slo.koordinator.sh"));
  check(slo.length === 1 && sameSet(slo[0].apiGroups, ["slo.koordinator.sh"]) &&
        sameSet(slo[0].resources ?? [], ["nodeslos"]) &&
        sameSet(slo[0].verbs ?? [], ["get", "list", "watch"]),
        "ClusterRole: get, list, watch on nodeslos only");
  const reads = (role?.rules ?? []).filter((r) => !(r.verbs ?? []).includes("create") && !slo.includes(r));
  const verbs = reads.flatMap((r) => r.verbs ?? []);
  check(sameSet([...new Set(verbs)], ["get"]), "ClusterRole: get only", `verbs [${verbs}]`);
  /* the evictor: create on pods/eviction and events, and no other write */
  const writes = (role?.rules ?? []).filter((r) => (r.verbs ?? []).includes("create"));
  check(writes.every((r) => sameSet(r.verbs, ["create"])) &&
        sameSet(writes.flatMap((r) => r.resources ?? []), ["pods/eviction", "events"]),
        "ClusterRole: create only pods/eviction and events");
  const bind = objs.find((o) => o.kind === "ClusterRoleBinding");
  check(bind?.roleRef?.name === role?.metadata?.name, "ClusterRoleBinding: binds the role");
}

function main() {
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  const errs = docs.flatMap((d) => d.errors);
  check(!errs.length, `${file}: YAML parses`, errs.map((e) => e.message).join("; "));
  const objs = docs.map((d) => d.toJS()).filter(Boolean);
  const caps = readFileSync(capsFile, "utf8").split("\n").filter((l) => l && !l.startsWith("#"));
  for (const o of objs) schema(o);
  const ds = objs.find((o) => o.kind === "DaemonSet");
  check(ds, "a DaemonSet is in the manifests");
  const cfg = ds ? daemonSet(ds, objs, caps) : undefined;
  rbac(objs);
  if (configOut && cfg) writeFileSync(configOut, cfg);
  process.exit(failed ? 1 : 0);
}

main();
