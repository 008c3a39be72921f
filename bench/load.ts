/**
 * Suite 2, many runs at once: wall time, peak memory and heap retained per finished
 * run. Suite 3, one batch of N slow tool calls with unbounded concurrency.
 */
import { Effect } from "effect"
import { type BenchOptions, fmt, gc, median, table } from "./common.js"
import { agentProgram, contenders, plainLoop, type RunOnce, type Script, vercelAi } from "./contenders.js"
import { interleaved, type Measured } from "./measure.js"

export interface ConcurrencyRow {
  readonly contender: string
  readonly runs: number
  readonly idealMs: number
  readonly wallMs: number
  readonly ratioToIdeal: number
  readonly peakRssMb: number
  readonly peakHeapMb: number
  /** Heap after a forced GC minus heap before the round, per run, for each round. */
  readonly retainedBytesPerRun: ReadonlyArray<number>
}

const watchPeak = () => {
  let rss = 0
  let heap = 0
  const sample = () => {
    const m = process.memoryUsage()
    rss = Math.max(rss, m.rss)
    heap = Math.max(heap, m.heapUsed)
  }
  sample()
  const timer = setInterval(sample, 2)
  return () => {
    clearInterval(timer)
    sample()
    return { rss, heap }
  }
}

export const concurrency = async (options: BenchOptions): Promise<ReadonlyArray<ConcurrencyRow>> => {
  const runs = options.quick ? 2_000 : 10_000
  // Two rounds at least: retained memory that grows from one round to the next is a leak.
  const rounds = 2
  const script: Script = { steps: 5, calls: 1, delayMs: 10 }
  const { program, runtime } = agentProgram(script)
  const all = Effect.all(Array.from({ length: runs }, () => program), { concurrency: "unbounded", discard: true })
  const plain = plainLoop(script)
  const vercel = vercelAi(script)
  // The Vercel AI SDK, the fastest peer per step, shows what the ideal asks of any loop.
  const contendersHere: ReadonlyArray<{ name: string; many: () => Promise<unknown> }> = [
    { name: "plain loop", many: () => Promise.all(Array.from({ length: runs }, () => plain())) },
    { name: "Agent.run", many: () => runtime.runPromise(all) },
    { name: "Vercel AI SDK", many: () => Promise.all(Array.from({ length: runs }, () => vercel())) }
  ]
  // Warm-up: a twentieth of the load per round, so that nothing is compiled while measured.
  const warmRuns = Math.ceil(runs / 20)
  const warm = Effect.all(Array.from({ length: warmRuns }, () => program), { concurrency: "unbounded", discard: true })
  for (let i = 0; i < options.warmup; i++) {
    await Promise.all(Array.from({ length: warmRuns }, () => plain()))
    await runtime.runPromise(warm)
    await Promise.all(Array.from({ length: warmRuns }, () => vercel()))
  }
  const rows = contendersHere.map((c) => ({ name: c.name, wall: [] as Array<number>, rss: 0, heap: 0, retained: [] as Array<number> }))
  for (let round = 0; round < rounds; round++) {
    for (const [i, c] of contendersHere.entries()) {
      const row = rows[i]!
      gc()
      const before = process.memoryUsage().heapUsed
      const stop = watchPeak()
      const t0 = performance.now()
      await c.many()
      row.wall.push(performance.now() - t0)
      const peak = stop()
      row.rss = Math.max(row.rss, peak.rss)
      row.heap = Math.max(row.heap, peak.heap)
      gc()
      row.retained.push((process.memoryUsage().heapUsed - before) / runs)
    }
  }
  await runtime.dispose()
  const idealMs = script.steps * script.delayMs
  return rows.map((r) => ({
    contender: r.name,
    runs,
    idealMs,
    wallMs: median(r.wall),
    ratioToIdeal: median(r.wall) / idealMs,
    peakRssMb: r.rss / 2 ** 20,
    peakHeapMb: r.heap / 2 ** 20,
    retainedBytesPerRun: r.retained
  }))
}

export const printConcurrency = (rows: ReadonlyArray<ConcurrencyRow>): void => {
  const first = rows[0]
  if (first === undefined) return
  console.log(`\n${first.runs.toLocaleString("en")} concurrent runs of 5 steps, model latency 10 ms (ideal ${first.idealMs} ms)`)
  console.log(table(
    ["contender", "wall ms", "x ideal", "peak RSS MB", "peak heap MB", "retained B/run (each round)"],
    rows.map((r) => [
      r.contender,
      fmt(r.wallMs, 0),
      fmt(r.ratioToIdeal, 2),
      fmt(r.peakRssMb, 0),
      fmt(r.peakHeapMb, 0),
      r.retainedBytesPerRun.map((b) => fmt(b, 0)).join(" / ")
    ])
  ))
}

export interface BatchResult {
  readonly calls: number
  readonly toolMs: number
  readonly contenders: ReadonlyArray<Measured & { readonly runMs: number; readonly ratioToTool: number }>
}

/** One step of N calls of 5 ms each, all at once, then the answer: run time against 5 ms. */
export const batch = async (options: BenchOptions): Promise<ReadonlyArray<BatchResult>> => {
  const out: Array<BatchResult> = []
  for (const calls of [1, 8, 64]) {
    const script: Script = { steps: 2, calls, delayMs: 0, toolMs: 5, concurrency: calls }
    const runners: Array<{ name: string; run: RunOnce }> = contenders.filter((c) => !c.name.startsWith("(floor)")).map((c) => ({ name: c.name, run: c.make(script) }))
    const m = await interleaved(runners, options, options.quick ? 30 : 60, 1)
    out.push({
      calls,
      toolMs: 5,
      contenders: m.map((x) => ({ ...x, runMs: x.median, ratioToTool: x.median / 5 }))
    })
  }
  return out
}

export const printBatch = (results: ReadonlyArray<BatchResult>): void => {
  console.log("\none batch of N tool calls of 5 ms each, unbounded concurrency: whole run (2 zero-latency model steps), medians")
  const names = results[0]?.contenders.map((c) => c.name) ?? []
  console.log(table(
    ["N", ...names.map((n) => `${n} ms (x5ms)`)],
    results.map((r) => [String(r.calls), ...r.contenders.map((c) => `${fmt(c.runMs, 2)} (${fmt(c.ratioToTool, 2)})${c.trusted ? "" : "*"}`)])
  ))
  console.log("* spread too wide to trust")
}
