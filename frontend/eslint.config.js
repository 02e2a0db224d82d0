// ESLint (flat config): typescript-eslint's recommended rules and React's hooks rules, with no findings
// allowed (`npm run lint`, part of `make test`). typescript-eslint reads TypeScript through the
// `typescript` package, an alias of @typescript/typescript6 (TypeScript 7 has no JS API yet);
// type-checking itself is tsc 7 (`npm run typecheck`).
import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig([
  // schema.ts is generated from the server's OpenAPI spec (scripts/gen-api.mjs): fixed by regenerating.
  globalIgnores(["dist/", "src/api/schema.ts"]),
  {
    files: ["**/*.{ts,tsx}"],
    extends: [js.configs.recommended, tseslint.configs.recommended, reactHooks.configs.flat.recommended],
    languageOptions: { ecmaVersion: 2022, globals: globals.browser },
  },
  {
    files: ["**/*.{js,mjs}"],
    extends: [js.configs.recommended],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.node },
  },
]);
