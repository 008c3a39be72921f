/** Profiling entry: Agent.run alone, for `node --cpu-prof`. */
import { agentRun } from "./contenders.js"

const calls = Number(process.argv[2] ?? "1")
const run = agentRun({ steps: 20, calls, delayMs: 0 })
for (let i = 0; i < 30; i++) await run()
const t0 = performance.now()
const n = 400
for (let i = 0; i < n; i++) await run()
console.log(`Agent.run ${calls} call(s)/step: ${((performance.now() - t0) / n / 20 * 1000).toFixed(1)} us/step`)
