/**
 * The architecture's dependency rules (DESIGN.md), checked in CI by `npm run lint`.
 */
module.exports = {
  forbidden: [
    {
      name: "core-is-pure",
      comment: "core imports no store, no protocol, no server and no I/O module (clock and ids are injected)",
      severity: "error",
      from: { path: "^src/core" },
      to: {
        pathNot: "^src/core",
        dependencyTypesNot: ["type-only"],
        path: "^(src/(stores|protocols|server|cli|dashboard)|node_modules/(better-sqlite3|pg|fastify|undici))|^(fs|net|http|https|child_process|node:(fs|net|http|https|child_process|fs/promises))$",
      },
    },
    {
      name: "stores-import-only-core",
      severity: "error",
      from: { path: "^src/stores/([^/]+)/" },
      to: { path: "^src/(protocols|server|cli|dashboard)" },
    },
    {
      name: "stores-do-not-import-each-other",
      severity: "error",
      from: { path: "^src/stores/(sqlite|postgres)/" },
      to: { path: "^src/stores/(sqlite|postgres)/", pathNot: "^src/stores/$1/" },
    },
    {
      name: "protocols-do-not-import-stores",
      severity: "error",
      from: { path: "^src/protocols" },
      to: { path: "^src/(stores|server|cli)" },
    },
    {
      name: "protocols-do-not-import-each-other",
      comment: "src/protocols/http/ holds what every protocol needs of node:http itself, and imports no protocol",
      severity: "error",
      from: { path: "^src/protocols/([^/]+)/" },
      to: { path: "^src/protocols/", pathNot: "^src/protocols/($1|http)/" },
    },
    {
      name: "only-the-composition-root-picks-a-store",
      comment: "exactly one file (src/server/index.ts) chooses a concrete store",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(server/index\\.ts|stores/)" },
      to: { path: "^src/stores/(sqlite|postgres)/" },
    },
    {
      name: "client-sdk-is-standalone",
      comment: "the SDK depends on nothing but fetch and its own wire types",
      severity: "error",
      from: { path: "^client/" },
      to: { pathNot: "^client/", dependencyTypesNot: ["core"] },
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
    exclude: { path: "(\\.test\\.ts$|/testkit/)" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
