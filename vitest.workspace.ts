// The root lists every package with tests; each has a vitest.config.ts saying how it runs.
export default ["packages/*", "examples/*"]
