import { defineConfig } from "vitest/config"

const conditions = ["@agent-harness/source"]

/**
 * Settings every package shares: sibling packages are imported from their sources
 * (through the `@agent-harness/source` export condition), so tests never need a build.
 */
export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: {
    include: ["test/**/*.test.ts"]
  }
})
