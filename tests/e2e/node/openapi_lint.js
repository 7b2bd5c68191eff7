// Validates an OpenAPI document (default: docs/openapi.yaml) with
// swagger-parser: the YAML parses, every $ref resolves, and the document
// is valid against the OpenAPI 3.1 schema (3.0 and 2.0 by their own).
// Prints "openapi: ok <title> <version>, N paths" and exits 0, or prints
// what is wrong and exits 1. Run from tests/e2e/test_openapi.py.
import path from "node:path";
import { fileURLToPath } from "node:url";
import SwaggerParser from "@apidevtools/swagger-parser";

const here = path.dirname(fileURLToPath(import.meta.url));
const file = process.argv[2] || path.join(here, "..", "..", "..", "docs", "openapi.yaml");

try {
  const api = await SwaggerParser.validate(file);
  if (!String(api.openapi).startsWith("3.1.")) throw new Error(`expected OpenAPI 3.1, got ${api.openapi}`);
  console.log(`openapi: ok ${api.info.title} ${api.info.version}, ${Object.keys(api.paths).length} paths`);
} catch (e) {
  console.log(`openapi: ${file} is not valid: ${e.message}`);
  process.exit(1);
}
