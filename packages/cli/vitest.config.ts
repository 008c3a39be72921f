import { configDefaults, defineProject, mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

// The sample project's own tests (node:test, failing on purpose) are the coding demo's material.
export default mergeConfig(shared, defineProject({ test: { name: "cli", exclude: [...configDefaults.exclude, "sample/**"] } }))
