// Lint rules for every package: typescript-eslint's recommended set, no `any`,
// no focused or skipped tests left behind.
import eslint from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/dist/**", "**/build/**", "**/node_modules/**", "**/coverage/**"] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-namespace": "off",
      "no-constant-condition": ["error", { checkLoops: false }],
      "no-restricted-properties": [
        "error",
        { object: "it", property: "only", message: "focused test left behind" },
        { object: "describe", property: "only", message: "focused test left behind" }
      ]
    }
  },
  {
    files: ["packages/*/src/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "ThrowStatement", message: "fail in the Effect error channel instead of throwing" }
      ],
      "no-console": "error"
    }
  }
)
