/**
 * Suite 1: per-step overhead of each contender on a zero-latency model, 1 and 8 calls
 * per step, 20 steps per run; and Agent.run's cost per step as the history grows.
 */
import { type BenchOptions, fmt, median, table } from "./common.js"
import { contenders, type Script } from "./contenders.js"
import { interleaved, type Measured, roundRatio } from "./measure.js"

export interface OverheadResult {
  readonly callsPerStep: number
  readonly steps: number
  readonly contenders: ReadonlyArray<Measured & { readonly usPerStep: number; readonly ratioToVercel: number }>
}

export const overhead = async (options: BenchOptions): Promise<ReadonlyArray<OverheadResult>> => {
  const out: Array<OverheadResult> = []
  for (const calls of [1, 8]) {
    const script: Script = { steps: 20, calls, delayMs: 0 }
    const runners = contenders.map((c) => ({ name: c.name, run: c.make(script) }))
    const measured = await interleaved(runners, options, options.quick ? 15 : 40, script.steps / 1000)
    const vercel = measured.find((m) => m.name === "Vercel AI SDK")!
    out.push({
      callsPerStep: calls,
      steps: script.steps,
      contenders: measured.map((m) => ({ ...m, usPerStep: m.median, ratioToVercel: roundRatio(m, vercel) }))
    })
  }
  return out
}

export const printOverhead = (results: ReadonlyArray<OverheadResult>): void => {
  for (const r of results) {
    console.log(`\nper-step overhead: ${r.callsPerStep} tool call(s) per step, ${r.steps} steps per run, zero-latency model (medians)`)
    console.log(table(
      ["contender", "us/step", "x plain loop", "x Vercel AI SDK", "spread", ""],
      r.contenders.map((c) => [
        c.name,
        fmt(c.usPerStep, 1),
        fmt(c.ratio, 1),
        fmt(c.ratioToVercel, 2),
        `${fmt(c.spread * 100, 0)}%`,
        c.trusted ? "" : "spread too wide to trust"
      ])
    ))
  }
}

export interface HistoryResult {
  readonly history: number
  /** Marginal cost of a step: median over rounds of (run of 60 steps - run of 20 steps) / 40. */
  readonly plainUsPerStep: number
  readonly agentUsPerStep: number
}

/**
 * Whether a step costs more as the history grows: runs continuing a transcript of
 * 0, 1,000 and 10,000 messages, one call per step. The marginal cost per step (60-step
 * run minus 20-step run, paired within each round) leaves out what a run pays once to
 * take the transcript in.
 */
export const history = async (options: BenchOptions): Promise<ReadonlyArray<HistoryResult>> => {
  const out: Array<HistoryResult> = []
  const plain = contenders[0]!
  const agent = contenders.find((c) => c.name === "Agent.run")!
  for (const h of [0, 1_000, 10_000]) {
    const mk = (steps: number) => ({ steps, calls: 1, delayMs: 0, history: h })
    const runners = [
      { name: "plain 20", run: plain.make(mk(20)) },
      { name: "plain 60", run: plain.make(mk(60)) },
      { name: "Agent.run 20", run: agent.make(mk(20)) },
      { name: "Agent.run 60", run: agent.make(mk(60)) }
    ]
    const m = await interleaved(runners, options, options.quick ? 10 : 25, 1 / 1000)
    const marginal = (name: string) => {
      const short = m.find((x) => x.name === `${name} 20`)!.samples
      const long = m.find((x) => x.name === `${name} 60`)!.samples
      return median(long.map((x, k) => (x - short[k]!) / 40))
    }
    out.push({ history: h, plainUsPerStep: marginal("plain"), agentUsPerStep: marginal("Agent.run") })
  }
  return out
}

export const printHistory = (results: ReadonlyArray<HistoryResult>): void => {
  console.log("\ncost of one more step as the history grows (marginal us/step, 1 call per step)")
  console.log(table(
    ["history (messages)", "plain loop", "Agent.run"],
    results.map((r) => [r.history.toLocaleString("en"), fmt(r.plainUsPerStep, 1), fmt(r.agentUsPerStep, 1)])
  ))
}
