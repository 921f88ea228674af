// The chart's dashboard (files/grafana-dashboard.json) and alerts (files/prometheus-rules.yaml),
// checked against what gpuadmit exports (docs/install.md, "Dashboard and alerts"):
//   1. every gpuadmit_* metric an expression names is one the binary exports: the families of a
//      running `gpuadmit serve`'s /metrics (HELP/TYPE lines are written before any sample) and
//      of `gpuadmit fleet --live --output prometheus` over tests/fleet/data with a priced class
//      and a quota, histograms with their _bucket, _sum and _count series;
//   2. every PromQL expression parses: Prometheus' own parser, `promtool check rules`, over the
//      rules file as it is and over the dashboard's expressions written as recording rules
//      (Grafana's $__rate_interval read as 5m);
//   3. the dashboard is one Grafana loads: unique panel ids, a datasource variable, every
//      target with an expression.
//
// usage: node observability_test.mjs REPO_DIR GPUADMIT_BINARY PROMTOOL
// Exit 0 when every check passes; each failure is printed.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";

const [repo, gpuadmit, promtool] = process.argv.slice(2);
if (!repo || !gpuadmit || !promtool) {
  console.error("usage: node observability_test.mjs REPO_DIR GPUADMIT_BINARY PROMTOOL");
  process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), "gpuadmit-observability-"));
let failures = 0;
function check(ok, what) {
  if (!ok) {
    failures++;
    console.error(`FAIL: ${what}`);
  }
}

// The metric families of an exposition text, histograms with their series' suffixes.
function families(text) {
  const names = new Set();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(m[1]);
    if (m[2] === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(m[1] + s);
  }
  return names;
}

// `gpuadmit serve` on loopback ports the kernel picks; its "ready" log line gives them.
async function webhookMetrics() {
  const certs = join(scratch, "certs");
  execFileSync(gpuadmit, ["certs", "--service", "gpuadmit", "--namespace", "gpuadmit", "--out", certs,
    "--san", "127.0.0.1"], { stdio: "pipe" });
  const server = spawn(gpuadmit, ["serve", "--tls-cert", join(certs, "tls.crt"), "--tls-key",
    join(certs, "tls.key"), "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"],
  { stdio: ["ignore", "pipe", "pipe"] });
  try {
    const port = await new Promise((resolve, reject) => {
      let log = "";
      const timer = setTimeout(() => reject(new Error(`gpuadmit serve not ready: ${log}`)), 20000);
      const read = (chunk) => {
        log += chunk;
        for (const line of log.split("\n")) {
          if (!line.includes('"msg":"ready"')) continue;
          clearTimeout(timer);
          resolve(JSON.parse(line).metrics_port);
        }
      };
      server.stdout.on("data", read);
      server.stderr.on("data", read);
      server.on("exit", (code) => reject(new Error(`gpuadmit serve exited ${code}: ${log}`)));
    });
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    return families(await response.text());
  } finally {
    server.kill("SIGKILL");
  }
}

// The fleet's families with every optional family present: a priced class, a tenant quota.
function fleetMetrics() {
  const policy = YAML.parse(readFileSync(join(repo, "tests/fleet/data/live-policy.yaml"), "utf8"));
  policy.spec.classes.a100.price = { perGPUHour: 3.5, currency: "USD" };
  policy.spec.tenants[0].quota = { gpus: 4 };
  const file = join(scratch, "policy.yaml");
  writeFileSync(file, YAML.stringify(policy));
  const out = execFileSync(gpuadmit, ["fleet", "--live", "--policy", file, "--output", "prometheus",
    join(repo, "tests/fleet/data/live-fleet.yaml")], { encoding: "utf8" });
  return families(out);
}

function promtoolCheck(file, what) {
  try {
    execFileSync(promtool, ["check", "rules", file], { encoding: "utf8", stdio: "pipe" });
  } catch (e) {
    check(false, `${what}: promtool check rules: ${e.stdout}${e.stderr}`);
  }
}

const rulesFile = join(repo, "charts/gpuadmit/files/prometheus-rules.yaml");
const dashboard = JSON.parse(readFileSync(join(repo, "charts/gpuadmit/files/grafana-dashboard.json"), "utf8"));
const rules = YAML.parse(readFileSync(rulesFile, "utf8"));

const expressions = []; // [where, expr]
for (const group of rules.groups) {
  for (const rule of group.rules) expressions.push([`alert ${rule.alert}`, rule.expr]);
}
const ids = new Set();
for (const panel of dashboard.panels) {
  check(!ids.has(panel.id), `dashboard: panel id ${panel.id} is unique`);
  ids.add(panel.id);
  if (panel.type === "row") continue;
  check(panel.datasource?.uid === "${datasource}", `dashboard: panel "${panel.title}" reads the datasource variable`);
  check((panel.targets ?? []).length > 0, `dashboard: panel "${panel.title}" has targets`);
  for (const target of panel.targets ?? []) {
    check(typeof target.expr === "string" && target.expr.length > 0, `dashboard: panel "${panel.title}" target ${target.refId} has an expression`);
    expressions.push([`panel "${panel.title}" ${target.refId}`, target.expr]);
  }
}
check(dashboard.templating.list.some((v) => v.name === "datasource" && v.type === "datasource" && v.query === "prometheus"),
  "dashboard: a Prometheus datasource variable");

const exported = new Set([...(await webhookMetrics()), ...fleetMetrics()]);
check(exported.has("gpuadmit_requests_total") && exported.has("gpuadmit_fleet_cost_per_hour"),
  `both sources read: ${[...exported].join(" ")}`);
for (const [where, expr] of expressions) {
  for (const [name] of expr.matchAll(/\bgpuadmit_[a-z0-9_]+\b/g)) {
    check(exported.has(name), `${where}: ${name} is not a metric gpuadmit exports`);
  }
}

promtoolCheck(rulesFile, "files/prometheus-rules.yaml");
const recording = {
  groups: [{
    name: "dashboard",
    rules: expressions.filter(([where]) => where.startsWith("panel")).map(([, expr], i) => ({
      record: `dashboard:expression_${i}`,
      expr: expr.replaceAll("$__rate_interval", "5m"),
    })),
  }],
};
const recordingFile = join(scratch, "dashboard-rules.yaml");
writeFileSync(recordingFile, YAML.stringify(recording));
promtoolCheck(recordingFile, "files/grafana-dashboard.json's expressions");

rmSync(scratch, { recursive: true, force: true });
console.log(`observability: ${expressions.length} expressions, ${exported.size} exported series names, ${failures} failures`);
process.exit(failures ? 1 : 0);
