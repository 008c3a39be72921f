// The root lists every package; each package's vitest.config.ts says how it runs.
export default ["packages/*"]
