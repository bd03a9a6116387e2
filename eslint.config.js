// Lint: typescript-eslint's recommended rules, plus the project's "no any on public surfaces", and
// type-aware promise rules on the TypeScript sources (a dropped promise hides its rejection).
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "client/dist/**", "coverage/**", ".tmp/**", "bench/results/**", "**/*.cjs"] },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    files: ["**/*.ts", "**/*.mts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
    },
  },
  {
    // The account is a parameter or an explicit handle, never a prototype view: a view made with
    // Object.create shares whatever state its prototype holds, across accounts, without a type error.
    files: ["src/core/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "CallExpression[callee.object.name='Object'][callee.property.name='create']", message: "No Object.create in core: pass the account, or make a handle (AccountQueues)." },
      ],
    },
  },
);
