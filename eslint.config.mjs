import * as effectEslint from "@effect/eslint-plugin"
import eslint from "@eslint/js"
import importX from "eslint-plugin-import-x"
import tseslint from "typescript-eslint"

/**
 * Imports run one way (docs/architecture.md): app → http | layers; http → services | src;
 * layers → services | src; services → src; src → nothing of ours. Tests and benchmarks may reach
 * anything. A zone lists, for the files under `target`, the folders they may not import from.
 */
const dependencyZones = [
  { target: "./src", from: ["./app", "./http", "./layers", "./services", "./web"] },
  { target: "./services", from: ["./app", "./http", "./layers", "./web"] },
  { target: "./layers", from: ["./app", "./http", "./web"] },
  { target: "./http", from: ["./app", "./layers", "./web"] }
].map((zone) => ({ ...zone, message: "Imports run app → http | layers → services → src (docs/architecture.md)." }))

export default tseslint.config(
  { ignores: ["node_modules/**", "dist/**", "**/*.d.mts", "web/dist/**", "web/src/api/schema.ts"] },
  eslint.configs.recommended,
  tseslint.configs.recommended,
  ...effectEslint.configs.dprint,
  {
    plugins: { "import-x": importX },
    languageOptions: {
      globals: Object.fromEntries(
        [
          "Buffer",
          "URL",
          "WebAssembly",
          "clearInterval",
          "clearTimeout",
          "console",
          "performance",
          "process",
          "setInterval",
          "setTimeout"
        ].map((name) => [name, "readonly"])
      )
    },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],
      "import-x/no-restricted-paths": ["error", { zones: dependencyZones }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off"
    }
  },
  {
    // The console runs in the browser: its globals, not Node's.
    files: ["web/src/**/*.{ts,tsx}"],
    languageOptions: {
      globals: Object.fromEntries(
        [
          "Blob",
          "TextDecoder",
          "URL",
          "crypto",
          "document",
          "fetch",
          "history",
          "localStorage",
          "location",
          "window"
        ].map((name) => [name, "readonly"])
      )
    }
  }
)
