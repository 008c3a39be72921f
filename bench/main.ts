/**
 * `npm run bench`: every suite in one process, a table on stdout and the same figures
 * as JSON (`bench/results.json` unless `--json FILE`).
 */
import { execSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import * as os from "node:os"
import { parseOptions } from "./common.js"
import { contextBench, printContext } from "./context.js"
import { batch, concurrency, printBatch, printConcurrency } from "./load.js"
import { history, overhead, printHistory, printOverhead } from "./overhead.js"

const options = parseOptions(process.argv.slice(2))
const wanted = (name: string) => options.only === undefined || options.only.includes(name)

const gitCommit = (): string | undefined => {
  try {
    return execSync("git rev-parse --short HEAD", { stdio: ["ignore", "pipe", "ignore"] }).toString().trim()
  } catch {
    return undefined
  }
}

const machine = {
  cpus: os.cpus().length,
  cpu: os.cpus()[0]?.model ?? "unknown",
  memoryGb: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`,
  commit: gitCommit()
}
console.log(`bench on ${machine.cpus} x ${machine.cpu}, ${machine.memoryGb} GB, node ${machine.node}, commit ${machine.commit ?? "?"}`)
console.log(`warm-up rounds ${options.warmup}, measured rounds ${options.runs}${options.quick ? ", quick" : ""}`)

const started = performance.now()
const results: Record<string, unknown> = { machine, options: { ...options }, startedAt: new Date().toISOString() }

if (wanted("overhead")) {
  const r = await overhead(options)
  printOverhead(r)
  results["overhead"] = r
  const h = await history(options)
  printHistory(h)
  results["history"] = h
}
if (wanted("concurrency")) {
  const r = await concurrency(options)
  printConcurrency(r)
  results["concurrency"] = r
}
if (wanted("batch")) {
  const r = await batch(options)
  printBatch(r)
  results["batch"] = r
}
if (wanted("context")) {
  console.log("")
  const r = contextBench(options)
  printContext(r)
  results["context"] = r
}

// Every figure measured in interleaved rounds carries a `trusted` flag; say how many failed.
const untrusted: Array<string> = []
const collect = (value: unknown, path: string): void => {
  if (Array.isArray(value)) value.forEach((v, i) => collect(v, `${path}[${i}]`))
  else if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>
    if (record["trusted"] === false) untrusted.push(`${path} ${String(record["name"])}`)
    for (const [k, v] of Object.entries(record)) collect(v, path === "" ? k : `${path}.${k}`)
  }
}
collect({ overhead: results["overhead"], batch: results["batch"] }, "")
results["untrusted"] = untrusted
if (untrusted.length > 0) {
  console.log(
    `\n${untrusted.length} figure(s) had an interquartile spread above ${options.maxSpread * 100}% of their median and are not to be trusted;` +
      " the machine was too noisy: rerun with more --runs, or on a quieter machine."
  )
}

results["durationS"] = (performance.now() - started) / 1000
writeFileSync(options.json, JSON.stringify(results, null, 2) + "\n")
console.log(`\ndone in ${(results["durationS"] as number).toFixed(0)} s; figures in ${options.json}`)
