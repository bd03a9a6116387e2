/**
 * The architecture's dependency rules, each named and explained below, checked in CI by `npm run lint`.
 * Type-only imports count like any other (tsPreCompilationDeps): a type names what it depends on.
 */

/** The only Node builtins core may use: pure computation (hashes), no I/O, threads, DNS or timers of its own. */
const coreBuiltins = ["crypto"];
const builtinPattern = (names) => `^(node:)?(${names.join("|")})$`;

module.exports = {
  forbidden: [
    {
      name: "core-is-pure",
      comment: `core imports only core and the builtins listed in coreBuiltins (${coreBuiltins.join(", ")}): no store, protocol, package or I/O module; the clock and ids are injected`,
      severity: "error",
      from: { path: "^src/core/" },
      to: { pathNot: [`^src/core/`, builtinPattern(coreBuiltins)] },
    },
    {
      name: "core-through-its-index",
      comment: "protocols, the server, the CLI and the dashboard use core's public surface, src/core/index.ts, never its files",
      severity: "error",
      from: { path: "^src/(protocols|server|cli|dashboard)/" },
      to: { path: "^src/core/", pathNot: "^src/core/index\\.ts$" },
    },
    {
      name: "stores-import-only-core",
      severity: "error",
      from: { path: "^src/stores/([^/]+)/" },
      to: { path: "^src/(protocols|server|cli|dashboard)" },
    },
    {
      name: "stores-do-not-import-each-other",
      comment: "src/stores/testkit/ is the conformance suite: it knows the contract, never a store; src/stores/codecs/ holds the row mappings every store shares, and imports no store",
      severity: "error",
      from: { path: "^src/stores/([^/]+)/" },
      to: { path: "^src/stores/", pathNot: "^src/stores/($1|codecs)/" },
    },
    {
      name: "protocols-do-not-import-stores",
      severity: "error",
      from: { path: "^src/protocols" },
      to: { path: "^src/(stores|server|cli)" },
    },
    {
      name: "protocols-do-not-import-each-other",
      comment: "src/protocols/http/ holds what every protocol needs of node:http itself, src/protocols/auth/ how every protocol authenticates; neither imports a protocol",
      severity: "error",
      from: { path: "^src/protocols/([^/]+)/" },
      to: { path: "^src/protocols/", pathNot: "^src/protocols/($1|http|auth)/" },
    },
    {
      name: "only-the-composition-root-picks-a-store",
      comment: "exactly one file (src/server/index.ts) chooses a concrete store",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(server/index\\.ts|stores/)" },
      to: { path: "^src/stores/" },
    },
    {
      name: "client-sdk-is-standalone",
      comment: "the SDK depends on nothing but fetch and its own wire types: no package, and no Node builtin (it runs in browsers and edge runtimes too)",
      severity: "error",
      from: { path: "^client/" },
      to: { pathNot: "^client/" },
    },
    {
      name: "store-contract-below-the-services",
      comment: "the Store contract and the notifier are the layer the jobs service stands on: job records and the job store's contract sit beside them in src/core, never in jobs/",
      severity: "error",
      from: { path: "^src/core/(store|notifier|job|job-store|job-event-log|job-settings|lease-limits)\\.ts$" },
      to: { path: "^src/core/jobs/" },
    },
    {
      name: "jobs-below-schedules",
      comment: "a schedule submits jobs, so schedules/ builds on jobs/; jobs/ knows nothing of schedules (it builds jobs from keyed submits)",
      severity: "error",
      from: { path: "^src/core/jobs/" },
      to: { path: "^src/core/schedules/" },
    },
    {
      name: "no-circular",
      severity: "error",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "\\.test\\.ts$" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
