// GraphQL Code Generator's client preset: typed documents (as strings: no GraphQL library at run time) and
// their result and variable types, from the service's schema snapshot and the documented operations, which
// the Python client sends too (one set of operations, so both clients cover the same calls).
// CODEGEN_OUT writes elsewhere (the drift test, tests/client/test_typescript.py).
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  schema: "../../tests/snapshots/schema.graphql",
  documents: ["../python/memory_client/operations/*.graphql"],
  generates: {
    [process.env.CODEGEN_OUT ?? "src/generated/"]: {
      preset: "client",
      presetConfig: { fragmentMasking: false },
      config: {
        documentMode: "string",
        enumsAsTypes: true,
        useTypeImports: true,
        emitLegacyCommonJSImports: false,
        scalars: { DateTime: "string", Date: "string", JSON: "unknown" },
      },
    },
  },
};

export default config;
