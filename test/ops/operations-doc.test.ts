/**
 * docs/operations.md stays true: every metric a server exports is documented (and no other), the
 * alert rules pass `promtool check rules` and fire on the series they watch, the KEDA and HPA
 * examples' queries give a real server's advice, and the systemd unit verifies.
 */
import { execFile } from "node:child_process";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { ManualClock } from "../../src/core/index.js";
import { type RunningServer, createLogger, startServer } from "../../src/server/index.js";
import { repoRoot } from "../support/cli.js";
import { sample } from "../support/metrics-text.js";
import { promtool } from "../support/promtool.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const run = promisify(execFile);

interface Block {
  lang: string;
  text: string;
}

async function docBlocks(): Promise<{ doc: string; blocks: Block[] }> {
  const doc = await readFile(join(repoRoot, "docs/operations.md"), "utf8");
  const blocks = [...doc.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, text: m[2]! }));
  return { doc, blocks };
}

function block(blocks: Block[], lang: string, contains: string): string {
  const found = blocks.filter((b) => b.lang === lang && b.text.includes(contains));
  expect(found, `one ${lang} block containing ${contains}`).toHaveLength(1);
  return found[0]!.text;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- YAML documents of any shape
type Yaml = any;

describe("docs/operations.md", () => {
  let server: RunningServer;
  let scrape: string;
  let queueAnswer: Yaml;
  let blocks: Block[];
  let doc: string;
  let dir: string;

  beforeAll(async () => {
    ({ doc, blocks } = await docBlocks());
    dir = await makeTempDir("sluice-ops-doc-");
    // A second's work on queue "embed": 10 jobs of 0.5 s on workers of concurrency 1 → 5 workers.
    const clock = new ManualClock(Math.ceil(Date.now() / 1000) * 1000);
    server = await startServer({ port: 0, dataDir: dir, clock, logger: createLogger({ level: "silent" }) });
    await Promise.all(Array.from({ length: 10 }, (_, i) => server.jobs.submit("", "embed", { input: i })));
    const leased = await server.jobs.lease("", "embed", { max: 10 });
    clock.advance(500);
    await Promise.all(leased.map((j) => server.jobs.complete("", j.id, { leaseId: j.leaseToken, output: null })));
    clock.advance(1000);
    scrape = await (await fetch(`${server.url}/metrics`)).text();
    queueAnswer = await (await fetch(`${server.url}/v1/queues/embed`)).json();
  });
  afterAll(async () => {
    await server?.close();
    await removeTempDirs();
  });

  it("documents every metric the server exports, and no other", () => {
    const exported = [...scrape.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
    const ours = exported.filter((n) => n.startsWith("sluice_"));
    expect(ours.length).toBeGreaterThan(15);
    const tableRows = doc.split("\n").filter((l) => l.startsWith("| `"));
    const documented = new Set(tableRows.map((l) => /^\| `([a-z_]+)`/.exec(l)?.[1]).filter((n) => n?.startsWith("sluice_")));
    for (const name of ours) expect(documented.has(name), `${name} is documented`).toBe(true);
    for (const name of documented) expect(ours, `${name} is exported`).toContain(name);
    for (const name of exported.filter((n) => !n.startsWith("sluice_"))) expect(name).toMatch(/^(process|nodejs)_/);
  });

  it("has alert rules promtool accepts, which fire on the series they watch", async () => {
    const rules = join(dir, "sluice-alerts.yml");
    await writeFile(rules, block(blocks, "yaml", "groups:"));
    const checked = await promtool(["check", "rules", rules]);
    expect(checked.output).toMatch(/SUCCESS: 9 rules found/);
    expect(checked.code).toBe(0);

    const tests = join(dir, "sluice-alerts.test.yml");
    await writeFile(
      tests,
      JSON.stringify({
        rule_files: [rules],
        evaluation_interval: "1m",
        tests: [
          {
            interval: "1m",
            input_series: [
              { series: 'sluice_queue_dlq_messages{job="sluice",account="111111111111",queue="orders"}', values: "0 0 3x10" },
              { series: 'sluice_queue_oldest_message_age_seconds{job="sluice",account="111111111111",queue="embed"}', values: "0+60x30" },
              { series: 'sluice_requests_total{job="sluice",instance="a",protocol="sqs_json",action="SendMessage",code="InternalError"}', values: "0+1x20" },
              { series: 'sluice_jobs_total{job="sluice",account="111111111111",queue="embed",outcome="succeeded"}', values: "0+9x30" },
              { series: 'sluice_jobs_total{job="sluice",account="111111111111",queue="embed",outcome="failed"}', values: "0+1x30" },
              // Another account's queue of the same name fails nothing: it must not dilute (or trip) the first's rate.
              { series: 'sluice_jobs_total{job="sluice",account="222222222222",queue="embed",outcome="succeeded"}', values: "0+90x30" },
            ],
            alert_rule_test: [
              {
                eval_time: "10m",
                alertname: "SluiceDeadLetters",
                exp_alerts: [
                  {
                    exp_labels: { severity: "ticket", job: "sluice", account: "111111111111", queue: "orders" },
                    exp_annotations: { summary: "Queue orders (account 111111111111) has 3 messages in its dead-letter queue", description: "Read them (`sluice queues peek`), fix the cause, then `sluice dlq redrive` them to their source queue." },
                  },
                ],
              },
              { eval_time: "1m", alertname: "SluiceDeadLetters", exp_alerts: [] },
              {
                eval_time: "25m",
                alertname: "SluiceBacklogAging",
                exp_alerts: [
                  {
                    exp_labels: { severity: "page", job: "sluice", account: "111111111111", queue: "embed" },
                    exp_annotations: { summary: "Queue embed (account 111111111111): the oldest waiting message is 25m 0s old", description: "Workers are not keeping up or have stopped. Compare with sluice_queue_workers_desired." },
                  },
                ],
              },
              {
                eval_time: "12m",
                alertname: "SluiceServerErrors",
                exp_alerts: [{ exp_labels: { severity: "page", instance: "a" }, exp_annotations: { summary: "Sluice on a answers InternalError; its log has the stack at level error" } }],
              },
              {
                eval_time: "25m",
                alertname: "SluiceJobsFailing",
                exp_alerts: [{ exp_labels: { severity: "page", account: "111111111111", queue: "embed" }, exp_annotations: { summary: "Queue embed (account 111111111111): 10% of jobs fail" } }],
              },
            ],
          },
        ],
      }),
    );
    const tested = await promtool(["test", "rules", tests]);
    expect(tested.output).toContain("SUCCESS");
    expect(tested.code).toBe(0);
  });

  it("has KEDA and HPA examples whose queries give the server's advice", async () => {
    const advice = queueAnswer.queue.autoscaling.workersDesired as number;
    expect(advice).toBe(5);
    expect(sample(scrape, "sluice_queue_workers_desired", { queue: "embed" })).toBe(advice);

    const keda: Yaml = parse(block(blocks, "yaml", "type: prometheus"));
    expect(keda).toMatchObject({ apiVersion: "keda.sh/v1alpha1", kind: "ScaledObject", spec: { scaleTargetRef: { name: expect.any(String) } } });
    const promTrigger = keda.spec.triggers[0];
    expect(promTrigger.metadata.threshold).toBe("1");

    const [scaledObject, triggerAuth]: Yaml[] = parseAllDocuments(block(blocks, "yaml", "type: metrics-api")).map((d) => d.toJS());
    const apiTrigger = scaledObject.spec.triggers[0];
    expect(apiTrigger.metadata.targetValue).toBe("1");
    expect(triggerAuth).toMatchObject({ kind: "TriggerAuthentication", metadata: { name: apiTrigger.authenticationRef.name } });
    // KEDA's metrics-api scaler: GET the URL, read the value at valueLocation (a dotted path).
    const path = new URL(apiTrigger.metadata.url as string).pathname;
    const answer = await (await fetch(`${server.url}${path}`)).json();
    const value = (apiTrigger.metadata.valueLocation as string).split(".").reduce((o: Yaml, k) => o[k], answer);
    expect(value).toBe(advice);

    const adapter: Yaml = parse(block(blocks, "yaml", "metricsQuery"));
    const rule = adapter.rules.external[0];
    const hpa: Yaml = parse(block(blocks, "yaml", "kind: HorizontalPodAutoscaler"));
    expect(hpa).toMatchObject({ apiVersion: "autoscaling/v2", spec: { metrics: [{ type: "External", external: { target: { type: "AverageValue", averageValue: "1" } } }] } });
    const external = hpa.spec.metrics[0].external.metric;
    expect(external.name).toBe(rule.name.as);
    const matchers = Object.entries(external.selector.matchLabels as Record<string, string>).map(([k, v]) => `${k}="${v}"`).join(",");
    const adapterQuery = (rule.metricsQuery as string).replace("<<.Series>>", rule.seriesQuery as string).replace("<<.LabelMatchers>>", matchers);

    // Evaluate both queries with Prometheus' engine over the series the real server exported.
    const series = scrape.split("\n").filter((l) => l.startsWith("sluice_queue_workers_desired{"));
    const tests = join(dir, "scaler-queries.test.yml");
    await writeFile(
      tests,
      JSON.stringify({
        rule_files: [],
        tests: [
          {
            interval: "15s",
            input_series: series.map((l) => ({ series: l.slice(0, l.lastIndexOf(" ")), values: `${l.slice(l.lastIndexOf(" ") + 1)}x4` })),
            promql_expr_test: [promTrigger.metadata.query as string, adapterQuery].map((expr) => ({ expr, eval_time: "30s", exp_samples: [{ labels: "{}", value: advice }] })),
          },
        ],
      }),
    );
    const evaluated = await promtool(["test", "rules", tests]);
    expect(evaluated.output).toContain("SUCCESS");
    expect(evaluated.code).toBe(0);
  });

  it("has a systemd unit that verifies, with flags `sluice serve` knows", async () => {
    const unitText = block(blocks, "ini", "[Service]");
    const execStart = /^ExecStart=(\S+) (.*)$/m.exec(unitText)!;
    const { stdout: help } = await run(process.execPath, ["--import", "tsx", "src/cli/main.ts", "serve", "--help"], { cwd: repoRoot });
    for (const flag of execStart[2]!.match(/--[a-z-]+/g)!) expect(help).toContain(flag);
    // systemd checks that the command exists: stand a launcher in for the installed bin.
    const bin = join(dir, "sluice");
    await writeFile(bin, `#!/bin/sh\nexec ${process.execPath} ${join(repoRoot, "dist/cli/main.js")} "$@"\n`);
    await chmod(bin, 0o755);
    const unit = join(dir, "sluice.service");
    await writeFile(unit, unitText.replace(execStart[1]!, bin));
    const verified = await run("systemd-analyze", ["verify", unit]).then(
      ({ stderr }) => ({ code: 0, stderr }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(verified.stderr).toBe("");
    expect(verified.code).toBe(0);
    expect(parse(block(blocks, "yaml", "scrape_configs")).scrape_configs[0].job_name).toBe("sluice");
  });

  it("has Kubernetes manifests that match the image and the KEDA examples, and a compose file with secrets only in the environment", async () => {
    const dockerfile = await readFile(join(repoRoot, "Dockerfile"), "utf8");
    const uid = Number(/useradd .*--uid (\d+)/.exec(dockerfile)![1]);
    const docs: Yaml[] = parseAllDocuments(block(blocks, "yaml", "kind: PersistentVolumeClaim")).map((d) => d.toJS());
    const byKind = (kind: string): Yaml => docs.find((d) => d.kind === kind);
    const deployment = byKind("Deployment");
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: uid, fsGroup: uid });
    expect(container.readinessProbe.httpGet.path).toBe("/readyz");
    expect(container.volumeMounts[0].mountPath).toBe("/data");
    expect(pod.volumes[0].persistentVolumeClaim.claimName).toBe(byKind("PersistentVolumeClaim").metadata.name);
    expect(container.envFrom[0].secretRef.name).toBe(byKind("Secret").metadata.name);
    expect(deployment.spec.strategy.type).toBe("Recreate");
    // The metrics-api ScaledObject reads this Service's address.
    const [scaledObject]: Yaml[] = parseAllDocuments(block(blocks, "yaml", "type: metrics-api")).map((d) => d.toJS());
    const scaler = new URL(scaledObject.spec.triggers[0].metadata.url as string);
    const service = byKind("Service");
    expect(scaler.hostname).toBe(`${service.metadata.name}.default.svc`);
    expect(service.spec.ports.map((p: Yaml) => String(p.port))).toContain(scaler.port);

    const compose: Yaml = parse(await readFile(join(repoRoot, "compose.yaml"), "utf8"), { merge: true });
    const sluices = Object.entries(compose.services as Record<string, Yaml>).filter(([name]) => name.startsWith("sluice"));
    expect(sluices.map(([name]) => name).sort()).toEqual(["sluice", "sluice-a", "sluice-b"]);
    for (const [name, svc] of sluices) {
      expect(svc.image, name).toBe(compose.services.sluice.image);
      expect(svc.command, `${name} takes no flags: secrets stay out of ps`).toBeUndefined();
      expect(Object.keys(svc.environment)).toEqual(expect.arrayContaining(["SLUICE_ACCESS_KEY_ID", "SLUICE_SECRET_ACCESS_KEY", "SLUICE_API_TOKEN"]));
    }
    for (const node of ["sluice-a", "sluice-b"]) {
      expect(compose.services[node]).toMatchObject({ profiles: ["postgres"], environment: { SLUICE_STORE: "postgres" } });
      expect(compose.services[node].environment.SLUICE_POSTGRES_URL).toMatch(/^postgres:\/\/sluice:\$\{POSTGRES_PASSWORD[^}]*\}@postgres:5432\/sluice$/);
    }
    expect(compose.services.sluice.volumes).toContain("sluice-data:/data");
  });
});
