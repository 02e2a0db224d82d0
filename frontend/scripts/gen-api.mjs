// Generate the API's TypeScript types from the server's OpenAPI spec (docs/ui.md, "Types").
//
//   node scripts/gen-api.mjs [SPEC] [OUT]     (npm run gen:api -- SPEC)
//
// SPEC: a spec file (`myapp openapi > spec.json`), or "-" (the default) for stdin.
// OUT: default src/api/schema.ts. tests/api/test_openapi_types.py runs this same script and fails when
// the committed file differs: regenerate with `make api-types`.
import { readFileSync, writeFileSync } from "node:fs";
import openapiTS, { astToString } from "openapi-typescript";

const [specPath = "-", outPath = "src/api/schema.ts"] = process.argv.slice(2);
async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const spec = JSON.parse(specPath === "-" ? await readStdin() : readFileSync(specPath, "utf8"));

const ast = await openapiTS(spec, {
  // A request field with a default is still optional to send (`paused` of a clone).
  defaultNonNullable: false,
  // Operations' 4xx answers are typed too (the Error component).
  silent: true,
});

const header = `// Generated from the server's OpenAPI spec by scripts/gen-api.mjs (openapi-typescript): do not edit.
// Regenerate after changing the API: make api-types (docs/ui.md). tests/api/test_openapi_types.py checks it.
`;
writeFileSync(outPath, header + astToString(ast));
