/** Profiling entry: Agent.run alone, for `node --cpu-prof`. Arguments: calls per step, history. */
import { agentRun } from "./contenders.js"

const calls = Number(process.argv[2] ?? "1")
const history = Number(process.argv[3] ?? "0")
const run = agentRun({ steps: 20, calls, delayMs: 0, history })
for (let i = 0; i < 30; i++) await run()
const t0 = performance.now()
const n = Number(process.argv[4] ?? "200")
for (let i = 0; i < n; i++) await run()
console.log(`Agent.run ${calls} call(s)/step, history ${history}: ${((performance.now() - t0) / n / 20 * 1000).toFixed(1)} us/step`)
