// The chart and `gpuadmit render`, checked with real tools (tests/k8s/README.md):
//   1. `helm lint --strict` and `helm template` for every values file in charts/gpuadmit/ci/;
//   2. every rendered object, and every object `gpuadmit render` makes for each policy in
//      policies/, validated against the Kubernetes 1.34 OpenAPI schemas (kubernetes-models) and
//      cert-manager's / prometheus-operator's; the validator is shown to reject a wrong type and
//      a missing required field;
//   3. the wiring: Service ports, webhook paths, Secret and ConfigMap names mounted, probes,
//      security context, the policy passing `gpuadmit policy check`, `render | lint` clean;
//      RBAC exactly what the server's code asks for, per feature;
//   4. webhook.registration chart: the chart's webhook configurations equal render's (modulo
//      caBundle, labels, annotations); gpuadmit (the default): none rendered, and the registrar's
//      --register-webhooks flags carry every webhook value (it renders them with render's code);
//   5. no install window, no bypass: kube-system, kube-node-lease and the release namespace always
//      excluded, the opt-out label only when asked for;
//   6. native.enabled: the registrar's --register-native and --native-api carry native.mode and
//      native.api, its ClusterRole covers the native policies and bindings; webhook.enabled false:
//      no webhook configuration rendered or registered;
//   7. least privilege (docs/install.md): the server's ServiceAccount is bound to read verbs only
//      and mounts a token only for its lookups; the registrar (one replica, Recreate, no port,
//      the CA mounted without the serving key) holds the write rules, exactly what its code asks
//      for; no other ServiceAccount or Pod gets a token.
//
// usage: node chart_test.mjs REPO_DIR GPUADMIT_BINARY HELM_BINARY
// Exit 0 when every check passes; each failure is printed with the values file and object.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import YAML from "yaml";

const [repo, gpuadmit, helm] = process.argv.slice(2);
if (!repo || !gpuadmit || !helm) {
  console.error("usage: node chart_test.mjs REPO_DIR GPUADMIT_BINARY HELM_BINARY");
  process.exit(2);
}
const chart = join(repo, "charts/gpuadmit");
const scratch = mkdtempSync(join(tmpdir(), "gpuadmit-chart-"));
const RELEASE = "gpuadmit";
const NAMESPACE = "gpuadmit";

let failures = 0;
let checks = 0;
function check(ok, what) {
  checks++;
  if (!ok) {
    failures++;
    console.error(`FAIL: ${what}`);
  }
}

function run(file, args, input) {
  try {
    return { code: 0, out: execFileSync(file, args, { input, encoding: "utf8", stdio: "pipe" }) };
  } catch (e) {
    return { code: e.status ?? 1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

function parseStream(text) {
  return YAML.parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length) throw new Error(`YAML: ${d.errors[0].message}`);
      return d.toJS();
    })
    .filter((o) => o !== null && o !== undefined);
}

// --- schema validation -------------------------------------------------------------------

// apiVersion → the package module holding its kinds.
function modulePath(apiVersion) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  if (group === "") return `kubernetes-models/${version}`;
  if (group === "cert-manager.io") return `@kubernetes-models/cert-manager/${group}/${version}`;
  if (group === "monitoring.coreos.com")
    return `@kubernetes-models/prometheus-operator/${group}/${version}`;
  return `kubernetes-models/${group}/${version}`;
}

const modules = new Map();
async function modelFor(apiVersion, kind) {
  const path = modulePath(apiVersion);
  if (!modules.has(path)) {
    modules.set(path, await import(path).catch(() => null));
  }
  const model = modules.get(path)?.[kind];
  return typeof model === "function" ? model : null;
}

// Throws with the schema's message when the object does not validate.
async function validate(object) {
  const Model = await modelFor(object.apiVersion, object.kind);
  if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new Model(structuredClone(object)).validate();
}

const validated = {};
async function checkValid(object, where) {
  const name = `${where}: ${object.kind} ${object.metadata?.name}`;
  try {
    await validate(object);
    validated[object.kind] = (validated[object.kind] ?? 0) + 1;
    checks++;
  } catch (e) {
    check(false, `${name} does not validate: ${e.message}`);
  }
}

async function expectInvalid(object, what) {
  let rejected = false;
  try {
    await validate(object);
  } catch {
    rejected = true;
  }
  check(rejected, `the validator accepts ${what}`);
}

// --- helpers over rendered objects -------------------------------------------------------

const find = (objects, kind, name) =>
  objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));

function valuesOf(file) {
  const defaults = YAML.parse(readFileSync(join(chart, "values.yaml"), "utf8"));
  const merge = (a, b) => {
    if (b === null || typeof b !== "object" || Array.isArray(b)) return b;
    const out = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = merge(a?.[k], v);
    return out;
  };
  return merge(defaults, YAML.parse(readFileSync(file, "utf8")) ?? {});
}

function policyText(values) {
  return values.policy || readFileSync(join(chart, "files/default-policy.yaml"), "utf8");
}

// The webhook configuration without what legitimately differs between the chart and render.
function comparable(config) {
  const c = structuredClone(config);
  delete c.metadata.labels;
  delete c.metadata.annotations;
  for (const w of c.webhooks) delete w.clientConfig.caBundle;
  return c;
}

// Every rule of the (Cluster)Roles bound to ServiceAccount `account` of the release namespace.
function rulesBoundTo(objects, account) {
  const rules = [];
  for (const b of objects.filter((o) => o.kind === "ClusterRoleBinding" || o.kind === "RoleBinding")) {
    if (!b.subjects?.some((s) => s.kind === "ServiceAccount" && s.name === account && s.namespace === NAMESPACE)) continue;
    const role = find(objects, b.roleRef.kind, b.roleRef.name);
    rules.push(...(role?.rules ?? [{ apiGroups: ["?"], resources: [`missing ${b.roleRef.kind} ${b.roleRef.name}`], verbs: ["?"] }]));
  }
  return rules;
}

// The registrar (templates/registrar.yaml): present exactly when something is registered; one
// replica, Recreate, no port, its Pods selected by nothing of the server's; its flags carry every
// webhook and native value; the CA mounted without the serving key; its RBAC exactly what
// kube/webhook_registration.h asks for.
function checkRegistrar(objects, values, where, { registers, service, policyVolume }) {
  const fullname = RELEASE;
  const native = values.native.enabled;
  const registrar = find(objects, "Deployment", `${fullname}-registrar`);
  check(Boolean(registrar) === (registers || native),
    `${where}: a registrar Deployment exactly when the webhooks are registered by gpuadmit or native.enabled`);
  check(!find(objects, "ClusterRole", fullname) === !registrar && !find(objects, "ServiceAccount", `${fullname}-registrar`) === !registrar,
    `${where}: the registrar's ClusterRole and ServiceAccount exactly with it`);
  if (!registrar) return;
  const spec = registrar.spec, pod = spec.template.spec, container = pod.containers[0];
  check(spec.replicas === 1 && spec.strategy.type === "Recreate", `${where}: the registrar runs one replica, Recreate (one writer)`);
  check(pod.containers.length === 1 && !container.ports && !container.livenessProbe && !container.readinessProbe,
    `${where}: the registrar listens on nothing`);
  const labels = spec.template.metadata.labels;
  const selects = (selector) => Object.entries(selector).every(([k, v]) => labels[k] === v);
  check(isDeepStrictEqual(spec.selector.matchLabels, labels) && !selects(service.spec.selector) &&
    !selects(find(objects, "Deployment", fullname).spec.selector.matchLabels) &&
    objects.filter((o) => o.kind === "PodDisruptionBudget" || (o.kind === "NetworkPolicy" && o.metadata.name === fullname))
      .every((o) => !selects(o.spec.selector?.matchLabels ?? o.spec.podSelector.matchLabels)),
    `${where}: the registrar's Pods are selected by none of the server's Service, Deployment, PDB or NetworkPolicy`);
  const sc = container.securityContext;
  check(pod.securityContext.runAsNonRoot === true && sc.readOnlyRootFilesystem === true && sc.allowPrivilegeEscalation === false &&
    isDeepStrictEqual(sc.capabilities.drop, ["ALL"]), `${where}: the registrar's security context`);
  // Its flags: those the server had, carrying every value.
  const args = container.args;
  const flag = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const values_ = (name) => args.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3));
  const mounted = Object.fromEntries(container.volumeMounts.map((m) => [m.name, m.mountPath]));
  const volume = (name) => pod.volumes.find((v) => v.name === name);
  check(args[0] === "register" && args[1] === "--watch" && Number(flag("interval")) === values.registrar.intervalSeconds,
    `${where}: the registrar runs gpuadmit register --watch`);
  check(flag("policy") === `${mounted.policy}/policy.yaml` && isDeepStrictEqual(volume("policy")?.configMap, policyVolume),
    `${where}: the registrar reads the server's policy ConfigMap`);
  check(flag("webhook-namespace") === NAMESPACE && flag("webhook-owner") === fullname &&
    args.includes("--webhook-opt-out-label") === values.webhook.optOutLabel,
    `${where}: the registrar has the release namespace, its own ClusterRole as owner and webhook.optOutLabel`);
  check(args.includes("--register-webhooks") === registers && (registers || !flag("webhook-service")),
    `${where}: --register-webhooks exactly when webhook.enabled and webhook.registration gpuadmit`);
  if (registers) {
    check(flag("webhook-service") === service.metadata.name &&
      flag("webhook-failure-policy") === values.webhook.failurePolicy &&
      Number(flag("webhook-mutating-timeout")) === values.webhook.mutating.timeoutSeconds &&
      Number(flag("webhook-validating-timeout")) === values.webhook.validating.timeoutSeconds &&
      isDeepStrictEqual(values_("webhook-exclude-namespace"), values.webhook.excludeNamespaces) &&
      flag("templates") === values.webhook.templates,
      `${where}: --register-webhooks carries every webhook value: ${args.join(" ")}`);
    // The CA it writes into caBundle: the TLS Secret's ca.crt alone, or the existingSecret's caBundle.
    const ca = flag("webhook-ca-bundle") ?? "";
    const caVolume = volume("ca");
    const fromTls = values.certificates.mode !== "existingSecret" &&
      caVolume?.secret?.secretName === find(objects, "Deployment", fullname).spec.template.spec.volumes.find((v) => v.name === "tls").secret.secretName &&
      isDeepStrictEqual(caVolume.secret.items, [{ key: "ca.crt", path: "ca.crt" }]);
    const caMap = find(objects, "ConfigMap", caVolume?.configMap?.name);
    const fromMap = values.certificates.mode === "existingSecret" &&
      caMap?.data?.["ca.crt"] === Buffer.from(values.certificates.existingSecret.caBundle, "base64").toString();
    check(ca === `${mounted.ca}/ca.crt` && (fromTls || fromMap), `${where}: --webhook-ca-bundle ${ca} is the mounted CA, without the serving key`);
  }
  check(!pod.volumes.some((v) => v.secret?.items?.some((i) => i.key === "tls.key") || (v.secret && !v.secret.items)),
    `${where}: the registrar mounts no serving key`);
  check(flag("register-native") === (native ? values.native.mode : undefined) &&
    flag("native-api") === (native ? values.native.api : undefined),
    `${where}: --register-native=${values.native.mode} --native-api=${values.native.api} exactly with native.enabled: ${args.join(" ")}`);
  // Tokens: the registrar's Pod only, not its ServiceAccount's default.
  const account = find(objects, "ServiceAccount", pod.serviceAccountName);
  check(pod.serviceAccountName === `${fullname}-registrar` && pod.automountServiceAccountToken === true &&
    account?.automountServiceAccountToken === false,
    `${where}: the registrar's Pod mounts its token; its ServiceAccount mounts none by default`);
  // RBAC: exactly what the registrar's code asks for.
  const webhookKinds = ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"];
  const nativeKinds = ["validatingadmissionpolicies", "validatingadmissionpolicybindings",
    "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"];
  const expected = [
    ...(registers ? [
      { apiGroups: ["admissionregistration.k8s.io"], resources: webhookKinds, verbs: ["create"] },
      { apiGroups: ["admissionregistration.k8s.io"], resources: webhookKinds, resourceNames: [fullname], verbs: ["get", "update"] }] : []),
    ...(native ? [
      { apiGroups: ["admissionregistration.k8s.io"], resources: nativeKinds, verbs: ["get", "list", "create", "update", "delete"] }] : []),
    { apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterroles"], resourceNames: [fullname], verbs: ["get"] },
    ...(registers ? [{ apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list"] }] : []),
  ];
  const granted = rulesBoundTo(objects, pod.serviceAccountName);
  check(isDeepStrictEqual(granted, expected),
    `${where}: the registrar's rules are exactly ${JSON.stringify(expected)}, not ${JSON.stringify(granted)}`);
  const roleBinding = find(objects, "RoleBinding", `${fullname}-registrar`);
  check(!roleBinding || roleBinding.metadata.namespace === NAMESPACE, `${where}: the EndpointSlice Role is the release namespace's`);
  if (values.networkPolicy.enabled) {
    const policy = find(objects, "NetworkPolicy", `${fullname}-registrar`);
    check(policy && selects(policy.spec.podSelector.matchLabels) && isDeepStrictEqual(policy.spec.policyTypes, ["Ingress"]) &&
      !policy.spec.ingress, `${where}: a NetworkPolicy admits no traffic to the registrar`);
  }
}

// --- the wiring of one rendered chart ----------------------------------------------------

function checkWiring(objects, values, where) {
  const fullname = RELEASE;
  const deployment = find(objects, "Deployment", fullname);
  const service = find(objects, "Service", fullname);
  check(deployment && service, `${where}: a Deployment and a Service named ${fullname}`);
  if (!deployment || !service) return;
  const pod = deployment.spec.template.spec;
  const container = pod.containers.find((c) => c.name === "gpuadmit");
  const ports = Object.fromEntries(container.ports.map((p) => [p.name, p.containerPort]));
  const svcPort = (name) => service.spec.ports.find((p) => p.name === name);
  check(svcPort("https")?.port === 443 && svcPort("https")?.targetPort === "https",
    `${where}: Service port 443 → targetPort https`);
  check(ports.https === values.server.port, `${where}: container port https = server.port`);
  check(svcPort("metrics")?.targetPort === "metrics" && ports.metrics === values.server.metricsPort,
    `${where}: metrics port wired`);
  check(isDeepStrictEqual(service.spec.selector, deployment.spec.selector.matchLabels) &&
    Object.entries(service.spec.selector).every(([k, v]) => deployment.spec.template.metadata.labels[k] === v),
    `${where}: Service selects the Deployment's Pods`);
  const args = container.args;
  const flag = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  check(args[0] === "serve", `${where}: the container runs gpuadmit serve`);
  check(flag("listen") === `:${values.server.port}` && flag("metrics-listen") === `:${values.server.metricsPort}`,
    `${where}: --listen and --metrics-listen match the container ports`);
  check(flag("templates") === values.webhook.templates,
    `${where}: the server's --templates is webhook.templates (${values.webhook.templates}), as the mutating webhook's rules are`);

  // Webhooks → Service: rendered by the chart, or registered by the registrar.
  const registers = values.webhook.enabled && values.webhook.registration === "gpuadmit";
  const renders = values.webhook.enabled && values.webhook.registration === "chart";
  const mode = values.certificates.mode;
  const mounted = Object.fromEntries(container.volumeMounts.map((m) => [m.name, m.mountPath]));
  const volume = (name) => pod.volumes.find((v) => v.name === name);
  check(!args.some((a) => /^--(register-|webhook-|native-api)/.test(a)),
    `${where}: the server is given no registration flag (registration is the registrar's): ${args.join(" ")}`);
  if (registers) {
    check(!find(objects, "MutatingWebhookConfiguration") && !find(objects, "ValidatingWebhookConfiguration"),
      `${where}: no webhook configuration rendered: the registrar registers them once the Service is ready`);
  }
  for (const [kind, path] of [["MutatingWebhookConfiguration", "/mutate"], ["ValidatingWebhookConfiguration", "/validate"]]) {
    const config = find(objects, kind);
    if (!renders) {
      check(!config, `${where}: no ${kind} rendered by the chart (webhook.enabled ${values.webhook.enabled}, registration ${values.webhook.registration})`);
      continue;
    }
    check(config, `${where}: a ${kind}`);
    if (!config) continue;
    for (const w of config.webhooks) {
      const s = w.clientConfig.service;
      check(s.name === service.metadata.name && s.namespace === NAMESPACE && s.port === 443 && s.path === path,
        `${where}: ${kind} calls ${service.metadata.name}.${NAMESPACE}:443${path}, not ${JSON.stringify(s)}`);
      check(isDeepStrictEqual(w.admissionReviewVersions, ["v1"]) && w.sideEffects === "None" &&
        w.matchPolicy === "Equivalent" && w.failurePolicy === values.webhook.failurePolicy,
        `${where}: ${kind} settings`);
      const timeout = kind.startsWith("Mutating") ? values.webhook.mutating.timeoutSeconds : values.webhook.validating.timeoutSeconds;
      check(w.timeoutSeconds === timeout, `${where}: ${kind} timeoutSeconds ${timeout}`);
      check(kind.startsWith("Validating") || w.reinvocationPolicy === "IfNeeded", `${where}: reinvocationPolicy IfNeeded`);
      const excluded = w.namespaceSelector.matchExpressions[0];
      check(excluded.key === "kubernetes.io/metadata.name" && excluded.operator === "NotIn" &&
        [NAMESPACE, "kube-system", "kube-node-lease"].every((ns) => excluded.values.includes(ns)),
        `${where}: ${kind} always skips the release namespace, kube-system and kube-node-lease`);
      check(Boolean(w.objectSelector) === values.webhook.optOutLabel,
        `${where}: ${kind} honours gpuadmit.io/ignore only with webhook.optOutLabel`);
      check(mode === "certManager" ? !w.clientConfig.caBundle && config.metadata.annotations?.["cert-manager.io/inject-ca-from"] === `${NAMESPACE}/${fullname}-tls`
        : Boolean(w.clientConfig.caBundle), `${where}: ${kind} caBundle for mode ${mode}`);
    }
  }

  checkRegistrar(objects, values, where, { registers, service, policyVolume: volume("policy")?.configMap });

  // Secrets and the ConfigMap mounted.
  const tlsSecret = volume("tls")?.secret?.secretName;
  if (mode === "selfSigned") {
    const secret = find(objects, "Secret", tlsSecret);
    check(secret && secret.type === "kubernetes.io/tls" && secret.data["tls.crt"] && secret.data["tls.key"] && secret.data["ca.crt"],
      `${where}: the mounted Secret ${tlsSecret} is rendered with tls.crt, tls.key, ca.crt`);
    const ca = Buffer.from(secret?.data?.["ca.crt"] ?? "", "base64").toString();
    check(ca.includes("BEGIN CERTIFICATE") && (!renders ||
      find(objects, "MutatingWebhookConfiguration").webhooks[0].clientConfig.caBundle === secret?.data?.["ca.crt"]),
      `${where}: the caBundle is the Secret's CA`);
  } else if (mode === "certManager") {
    const cert = objects.find((o) => o.kind === "Certificate" && o.spec.secretName === tlsSecret && !o.spec.isCA);
    check(cert, `${where}: a cert-manager Certificate writes the mounted Secret ${tlsSecret}`);
    check(cert && cert.spec.dnsNames.includes(`${fullname}.${NAMESPACE}.svc`), `${where}: the Certificate names the Service`);
  } else {
    check(tlsSecret === values.certificates.existingSecret.name, `${where}: the existing Secret is mounted`);
  }
  check(flag("tls-cert") === `${mounted.tls}/tls.crt` && flag("tls-key") === `${mounted.tls}/tls.key`,
    `${where}: --tls-cert/--tls-key point into the tls volume`);
  const policyVolume = volume("policy")?.configMap;
  check(flag("policy") === `${mounted.policy}/policy.yaml` && policyVolume?.items?.[0]?.path === "policy.yaml" &&
    !container.volumeMounts.some((m) => m.subPath), `${where}: --policy is the ConfigMap volume's policy.yaml, no subPath`);
  const configMap = find(objects, "ConfigMap", policyVolume?.name);
  check(configMap, `${where}: the policy ConfigMap ${policyVolume?.name} is rendered`);
  if (configMap) {
    const policyCheck = run(gpuadmit, ["policy", "check", "-"], configMap.data["policy.yaml"]);
    check(policyCheck.code === 0, `${where}: the ConfigMap's policy passes gpuadmit policy check: ${policyCheck.out}`);
  }
  if (values.server.clientCA.secretName) {
    check(volume("client-ca")?.secret?.secretName === values.server.clientCA.secretName &&
      flag("client-ca") === `${mounted["client-ca"]}/${values.server.clientCA.key}`, `${where}: --client-ca mounted`);
  }

  // Probes on the plain-HTTP metrics listener; the drain below the grace period.
  check(container.livenessProbe?.httpGet?.path === "/healthz" && container.livenessProbe.httpGet.port === "metrics",
    `${where}: liveness GET /healthz on the metrics port`);
  check(container.readinessProbe?.httpGet?.path === "/readyz" && container.readinessProbe.httpGet.port === "metrics",
    `${where}: readiness GET /readyz on the metrics port`);
  // gpuadmit serve counts the deadline from SIGTERM, the delay included.
  check(Number(flag("shutdown-delay")) === values.server.shutdownDelaySeconds &&
    Number(flag("shutdown-delay")) < Number(flag("shutdown-deadline")) &&
    Number(flag("shutdown-deadline")) < pod.terminationGracePeriodSeconds &&
    !container.lifecycle, `${where}: --shutdown-delay < --shutdown-deadline < terminationGracePeriodSeconds, no preStop`);

  // Security context.
  const sc = container.securityContext;
  check(pod.securityContext.runAsNonRoot === true && Number.isInteger(pod.securityContext.runAsUser) && pod.securityContext.runAsUser > 0 &&
    pod.securityContext.seccompProfile.type === "RuntimeDefault" && sc.readOnlyRootFilesystem === true &&
    sc.allowPrivilegeEscalation === false && isDeepStrictEqual(sc.capabilities.drop, ["ALL"]) && !sc.capabilities.add,
    `${where}: the security context`);
  // RBAC: exactly what the server's code asks the API for (docs/install.md, "RBAC"), read only.
  const dra = values.dra.lookup.enabled, classes = values.priorityClasses.fromCluster;
  const nodes = values.nodeWatch.enabled;
  const usesApi = dra || classes || nodes;
  check(pod.automountServiceAccountToken === usesApi, `${where}: service-account token mounted only when the server reads the API`);
  const serverAccount = find(objects, "ServiceAccount", pod.serviceAccountName);
  check(!serverAccount || serverAccount.automountServiceAccountToken === usesApi,
    `${where}: the server's ServiceAccount mounts a token only when the server reads the API`);
  check(args.includes("--dra-lookup") === dra, `${where}: --dra-lookup only with dra.lookup`);
  check(args.includes("--cluster-priority-classes") === classes, `${where}: --cluster-priority-classes only with priorityClasses.fromCluster`);
  check(args.includes("--node-watch") === nodes, `${where}: --node-watch only with nodeWatch.enabled`);
  const role = find(objects, "ClusterRole", `${fullname}-server`);
  const expectedRules = [
    ...(classes ? [{ apiGroups: ["scheduling.k8s.io"], resources: ["priorityclasses"], verbs: ["list", "watch"] }] : []),
    ...(nodes ? [{ apiGroups: [""], resources: ["nodes"], verbs: ["list", "watch"] }] : []),
    ...(dra ? [{ apiGroups: ["resource.k8s.io"], resources: ["resourceclaims", "resourceclaimtemplates"], verbs: ["get"] },
      { apiGroups: [""], resources: ["pods"], verbs: ["list"] }] : []),
  ];
  check(Boolean(role) === usesApi && (!role || isDeepStrictEqual(role.rules, expectedRules)),
    `${where}: the server's ClusterRole's rules are exactly ${JSON.stringify(expectedRules)}, not ${JSON.stringify(role?.rules)}`);
  const binding = find(objects, "ClusterRoleBinding", `${fullname}-server`);
  check(!usesApi || (binding?.subjects[0].name === pod.serviceAccountName && binding.roleRef.name === role?.metadata.name),
    `${where}: the ClusterRoleBinding binds the server Pods' ServiceAccount`);
  // A token only in the Pods that read the API: the server's for its lookups, the registrar's.
  for (const o of objects) {
    const podSpec = o.kind === "Pod" ? o.spec : o.spec?.template?.spec;
    if (!podSpec) continue;
    const reads = o.metadata.name === fullname ? usesApi : o.metadata.name === `${fullname}-registrar`;
    check(podSpec.automountServiceAccountToken === reads,
      `${where}: ${o.kind} ${o.metadata.name}: automountServiceAccountToken ${reads}, not ${podSpec.automountServiceAccountToken}`);
  }
  // Whatever binds the server's account: read verbs only, nothing in admissionregistration.
  const granted = rulesBoundTo(objects, pod.serviceAccountName);
  check(granted.every((r) => r.verbs.every((v) => ["get", "list", "watch"].includes(v)) &&
    !r.apiGroups.includes("admissionregistration.k8s.io") && !r.apiGroups.includes("*")),
    `${where}: the server's ServiceAccount may only read, and nothing of admissionregistration: ${JSON.stringify(granted)}`);

  // HA.
  const ha = values.replicaCount > 1 || values.autoscaling.enabled;
  const pdb = find(objects, "PodDisruptionBudget");
  check(Boolean(pdb) === (ha && values.podDisruptionBudget.enabled), `${where}: a PodDisruptionBudget exactly with HA`);
  check(!pdb || (pdb.spec.minAvailable === 1 && isDeepStrictEqual(pdb.spec.selector.matchLabels, deployment.spec.selector.matchLabels)),
    `${where}: the PodDisruptionBudget keeps one Pod`);
  check(!values.topologySpreadConstraints.enabled || pod.topologySpreadConstraints?.[0]?.topologyKey === "kubernetes.io/hostname",
    `${where}: Pods spread across nodes`);
  check(pod.priorityClassName === (values.priorityClassName || undefined), `${where}: priorityClassName`);
  check(deployment.spec.template.metadata.annotations?.["checksum/policy"] === undefined,
    `${where}: no policy checksum on the Pod template (a new policy must not restart the Pods)`);
}

// --- main ----------------------------------------------------------------------------------

const rendered = {};
const deploymentsByPolicy = new Map();
const ciDir = join(chart, "ci");
const ciFiles = readdirSync(ciDir).filter((f) => f.endsWith(".yaml")).sort();
check(ciFiles.length >= 6, "charts/gpuadmit/ci has the values files");
let firstDeployment = null;

for (const file of ciFiles) {
  const path = join(ciDir, file);
  const lint = run(helm, ["lint", "--strict", chart, "-f", path]);
  check(lint.code === 0, `helm lint --strict -f ci/${file}:\n${lint.out}`);
  const template = run(helm, ["template", RELEASE, chart, "--namespace", NAMESPACE, "-f", path]);
  check(template.code === 0, `helm template -f ci/${file}:\n${template.out}`);
  if (template.code !== 0) continue;
  const objects = parseStream(template.out);
  rendered[file] = objects.length;
  for (const o of objects) await checkValid(o, `ci/${file}`);
  const values = valuesOf(path);
  checkWiring(objects, values, `ci/${file}`);

  // The chart's webhook configurations are render's.
  const policyFile = join(scratch, `${file}.policy.yaml`);
  writeFileSync(policyFile, policyText(values));
  const r = run(gpuadmit, ["render", "--policy", policyFile, "--namespace", NAMESPACE, "--service", RELEASE,
    "--failure-policy", values.webhook.failurePolicy, "--templates", values.webhook.templates,
    ...(values.webhook.optOutLabel ? ["--opt-out-label"] : [])]);
  check(r.code === 0, `gpuadmit render for ci/${file}: ${r.out}`);
  const fromRender = r.code === 0 ? parseStream(r.out) : [];
  for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]) {
    const expected = find(fromRender, kind);
    if (!expected || values.webhook.registration !== "chart" || !values.webhook.enabled) continue;
    for (const w of expected.webhooks) {
      // What values may change beyond render's flags.
      w.timeoutSeconds = kind.startsWith("Mutating") ? values.webhook.mutating.timeoutSeconds : values.webhook.validating.timeoutSeconds;
      const ns = w.namespaceSelector.matchExpressions[0];
      ns.values = [...new Set([...ns.values, ...values.webhook.excludeNamespaces])].sort();
    }
    const a = comparable(find(objects, kind)), b = comparable(expected);
    check(isDeepStrictEqual(a, b), `ci/${file}: the chart's ${kind} differs from gpuadmit render's:\nchart:  ${JSON.stringify(a)}\nrender: ${JSON.stringify(b)}`);
  }
  // A policy change must not touch the Deployments (it would restart the Pods).
  const deployments = objects.filter((o) => o.kind === "Deployment");
  if (file === "default-values.yaml") firstDeployment = deployments;
  deploymentsByPolicy.set(file, deployments);
}
const mig = deploymentsByPolicy.get("onprem-mig-values.yaml");
check(firstDeployment && mig && isDeepStrictEqual(firstDeployment, mig),
  "a different policy (ci/onprem-mig-values.yaml) changes a Deployment; it must only change the ConfigMap");

// The chart's copies are exact.
const migValues = YAML.parse(readFileSync(join(ciDir, "onprem-mig-values.yaml"), "utf8"));
check(migValues.policy === readFileSync(join(repo, "policies/examples/onprem-mig.yaml"), "utf8"),
  "ci/onprem-mig-values.yaml's policy is not policies/examples/onprem-mig.yaml");
check(readFileSync(join(chart, "files/default-policy.yaml"), "utf8") === readFileSync(join(repo, "policies/default.yaml"), "utf8"),
  "charts/gpuadmit/files/default-policy.yaml is not policies/default.yaml: copy it");
{
  const r = run(gpuadmit, ["render", "--policy", join(repo, "policies/default.yaml")]);
  const rules = find(parseStream(r.out), "MutatingWebhookConfiguration")?.webhooks[0].rules;
  const chartRules = YAML.parse(readFileSync(join(chart, "files/webhook-rules.yaml"), "utf8"));
  check(isDeepStrictEqual(rules, chartRules),
    `charts/gpuadmit/files/webhook-rules.yaml is not what gpuadmit render makes; replace its list with:\n${(rules ?? []).map((x) => `- ${JSON.stringify(x)}`).join("\n")}`);
}

// gpuadmit render for every policy: valid objects, and nothing for lint to report.
const caFile = join(scratch, "ca.crt");
const certs = run(gpuadmit, ["certs", "--service", RELEASE, "--namespace", NAMESPACE, "--out", scratch]);
check(certs.code === 0, `gpuadmit certs: ${certs.out}`);
const policies = [join(repo, "policies/default.yaml"),
  ...readdirSync(join(repo, "policies/examples")).filter((f) => f.endsWith(".yaml")).sort().map((f) => join(repo, "policies/examples", f))];
for (const policy of policies) {
  const where = `render --policy ${policy.slice(repo.length + 1)}`;
  const r = run(gpuadmit, ["render", "--policy", policy, "--ca-bundle", caFile]);
  check(r.code === 0, `${where}: ${r.out}`);
  const objects = parseStream(r.out);
  rendered[where] = objects.length;
  for (const o of objects) await checkValid(o, where);
  check(find(objects, "MutatingWebhookConfiguration")?.webhooks[0].clientConfig.caBundle ===
    readFileSync(caFile).toString("base64"), `${where}: caBundle is the base64 of --ca-bundle`);
  const lint = run(gpuadmit, ["lint", "--policy", policy, "--output", "json", "-"], r.out);
  const summary = lint.code === 0 ? JSON.parse(lint.out).summary : null;
  check(lint.code === 0 && summary.deny + summary.warn + summary.errors === 0 && JSON.parse(lint.out).findings.length === 0,
    `${where} | gpuadmit lint - reports something: ${lint.out}`);
}

// The validator bites: a wrong type and a missing required field are rejected.
{
  const objects = parseStream(run(helm, ["template", RELEASE, chart, "--namespace", NAMESPACE, "-f", join(ciDir, "extras-values.yaml"), "--set", "webhook.registration=chart"]).out);
  const deployment = structuredClone(find(objects, "Deployment", RELEASE));
  deployment.spec.template.spec.containers[0].ports[0].containerPort = "8443";
  await expectInvalid(deployment, "a Deployment whose containerPort is a string");
  const noSelector = structuredClone(find(objects, "Deployment", RELEASE));
  delete noSelector.spec.selector;
  await expectInvalid(noSelector, "a Deployment without spec.selector");
  const webhook = structuredClone(find(objects, "ValidatingWebhookConfiguration"));
  webhook.webhooks[0].timeoutSeconds = "3";
  await expectInvalid(webhook, "a webhook whose timeoutSeconds is a string");
  const noSideEffects = structuredClone(find(objects, "MutatingWebhookConfiguration"));
  delete noSideEffects.webhooks[0].sideEffects;
  await expectInvalid(noSideEffects, "a webhook without sideEffects");
  const monitor = structuredClone(find(objects, "ServiceMonitor"));
  monitor.spec.endpoints = "metrics";
  await expectInvalid(monitor, "a ServiceMonitor whose endpoints is a string");
  const cm = parseStream(run(helm, ["template", RELEASE, chart, "--namespace", NAMESPACE, "-f", join(ciDir, "cert-manager-values.yaml")]).out);
  const cert = structuredClone(cm.find((o) => o.kind === "Certificate"));
  delete cert.spec.issuerRef;
  await expectInvalid(cert, "a cert-manager Certificate without issuerRef");
  const quota = parseStream(run(gpuadmit, ["render", "--policy", join(repo, "policies/examples/onprem-mig.yaml")]).out).find((o) => o.kind === "ResourceQuota");
  quota.spec.hard = ["requests.nvidia.com/gpu"];
  await expectInvalid(quota, "a ResourceQuota whose spec.hard is a list");
  await expectInvalid({ apiVersion: "gpuadmit.io/v1", kind: "Nothing", metadata: { name: "x" } }, "a kind without a schema");
}

// The server accepts the chart's exact arguments (paths mapped into a scratch directory, ports
// chosen by the kernel) and answers the chart's probes on the metrics port.
async function checkServeArgs(file) {
  const objects = parseStream(run(helm, ["template", RELEASE, chart, "--namespace", NAMESPACE, "-f", join(ciDir, file)]).out);
  const container = find(objects, "Deployment", RELEASE).spec.template.spec.containers[0];
  writeFileSync(join(scratch, "policy.yaml"), find(objects, "ConfigMap", `${RELEASE}-policy`).data["policy.yaml"]);
  const args = container.args.map((a) => a
    .replace("/etc/gpuadmit/policy/", `${scratch}/`).replace("/etc/gpuadmit/tls/", `${scratch}/`)
    .replace(/^--listen=.*/, "--listen=127.0.0.1:0").replace(/^--metrics-listen=.*/, "--metrics-listen=127.0.0.1:0"));
  // In a pod, with nothing listening where its API server would be: it starts, live, and not
  // ready, as the cluster's PriorityClasses cannot be listed.
  writeFileSync(join(scratch, "token"), "token\n");
  const env = { ...process.env, KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: "1",
    GPUADMIT_SERVICE_ACCOUNT_DIR: scratch };
  const server = spawn(gpuadmit, args, { stdio: ["ignore", "ignore", "pipe"], env });
  let log = "";
  server.stderr.on("data", (d) => { log += d; });
  const deadline = Date.now() + 10000;
  let metricsPort = 0;
  while (Date.now() < deadline && server.exitCode === null && !metricsPort) {
    metricsPort = Number(/"msg":"ready".*"metrics_port":(\d+)/.exec(log)?.[1] ?? 0);
    await new Promise((r) => setTimeout(r, 20));
  }
  check(metricsPort > 0, `gpuadmit ${args.join(" ")} did not become ready:\n${log}`);
  for (const [probe, status, text] of [[container.livenessProbe, 200, "ok\n"],
    [container.readinessProbe, 503, "the cluster's PriorityClasses are not listed yet\n"]]) {
    if (!metricsPort) break;
    const res = await fetch(`http://127.0.0.1:${metricsPort}${probe.httpGet.path}`).catch((e) => ({ status: e.message }));
    const body = typeof res.text === "function" ? await res.text() : "";
    check(res.status === status && body === text,
      `the chart's probe GET ${probe.httpGet.path} on the metrics port answered ${res.status} ${body}`);
  }
  server.kill("SIGKILL");
}
await checkServeArgs("default-values.yaml");
await checkServeArgs("native-fallback-without-webhook-values.yaml");

// The registrar accepts the chart's exact arguments (paths mapped into the scratch directory):
// in a pod whose API server does not answer, it starts, logs that registration failed, and keeps
// trying until SIGTERM, which it ends with 0.
async function checkRegisterArgs(file) {
  const objects = parseStream(run(helm, ["template", RELEASE, chart, "--namespace", NAMESPACE, "-f", join(ciDir, file)]).out);
  const container = find(objects, "Deployment", `${RELEASE}-registrar`).spec.template.spec.containers[0];
  writeFileSync(join(scratch, "policy.yaml"), find(objects, "ConfigMap", `${RELEASE}-policy`).data["policy.yaml"]);
  const args = container.args.map((a) => a
    .replace("/etc/gpuadmit/policy/", `${scratch}/`).replace("/etc/gpuadmit/ca/", `${scratch}/`));
  writeFileSync(join(scratch, "token"), "token\n");
  const env = { ...process.env, KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: "1",
    GPUADMIT_SERVICE_ACCOUNT_DIR: scratch };
  const registrar = spawn(gpuadmit, args, { stdio: ["ignore", "ignore", "pipe"], env });
  let log = "";
  registrar.stderr.on("data", (d) => { log += d; });
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline && registrar.exitCode === null && !log.includes('"msg":"registration failed; trying again"')) {
    await new Promise((r) => setTimeout(r, 20));
  }
  check(log.includes('"msg":"started"') && log.includes('"msg":"registration failed; trying again"'),
    `gpuadmit ${args.join(" ")} did not start and try:\n${log}`);
  registrar.kill("SIGTERM");
  const code = await new Promise((r) => (registrar.exitCode !== null ? r(registrar.exitCode) : registrar.on("exit", r)));
  check(code === 0, `gpuadmit register --watch ended with ${code} on SIGTERM:\n${log}`);
}
await checkRegisterArgs("default-values.yaml");
await checkRegisterArgs("native-full-values.yaml");

// A wrong value fails helm with a clear message (values.schema.json), not a broken Pod.
for (const [set, message] of [["replicaCount=two", "replicaCount: Invalid type"],
  ["webhook.failurePolicy=Maybe", "webhook.failurePolicy must be one of the following"],
  ["certificates.mode=existingSecret", "certificates.existingSecret.name"],
  ["webhook.enabled=false", "webhook.enabled false needs native.enabled true: with neither, nothing enforces the policy"],
  ["native.mode=partial", "native.mode must be one of the following"],
  ["server.shutdownDelaySeconds=25", "server.shutdownDelaySeconds (25) must be below server.shutdownDeadlineSeconds (20)"],
  ["server.shutdownDeadlineSeconds=30", "server.shutdownDeadlineSeconds (30) must be below terminationGracePeriodSeconds (30)"]]) {
  const r = run(helm, ["template", RELEASE, chart, "--namespace", NAMESPACE, "--set", set]);
  check(r.code !== 0 && r.out.includes(message), `helm template --set ${set} should fail with "${message}", got: ${r.out.slice(0, 300)}`);
}

rmSync(scratch, { recursive: true, force: true });
const total = Object.values(rendered).reduce((a, b) => a + b, 0);
const byKind = Object.entries(validated).sort().map(([k, n]) => `${k} ${n}`).join(", ");
console.log(`chart_test: ${ciFiles.length} values files and ${policies.length} policies rendered, ` +
  `${total} objects, ${Object.values(validated).reduce((a, b) => a + b, 0)} validated (${byKind})`);
for (const [what, n] of Object.entries(rendered)) console.log(`  ${what}: ${n} objects`);
console.log(`chart_test: ${checks} checks, ${failures} failed`);
process.exit(failures ? 1 : 0);
