/**
 * Suite 1: per-step overhead of each contender on a zero-latency model, 1 and 8 calls
 * per step, 20 steps per run; and Agent.run's cost per step as the history grows.
 */
import { type BenchOptions, fmt, table } from "./common.js"
import { contenders, type Script } from "./contenders.js"
import { interleaved, type Measured } from "./measure.js"

export interface OverheadResult {
  readonly callsPerStep: number
  readonly steps: number
  readonly contenders: ReadonlyArray<Measured & { readonly usPerStep: number }>
}

export const overhead = async (options: BenchOptions): Promise<ReadonlyArray<OverheadResult>> => {
  const out: Array<OverheadResult> = []
  for (const calls of [1, 8]) {
    const script: Script = { steps: 20, calls, delayMs: 0 }
    const runners = contenders.map((c) => ({ name: c.name, run: c.make(script) }))
    const measured = await interleaved(runners, options, options.quick ? 15 : 40, script.steps / 1000)
    out.push({ callsPerStep: calls, steps: script.steps, contenders: measured.map((m) => ({ ...m, usPerStep: m.median })) })
  }
  return out
}

export const printOverhead = (results: ReadonlyArray<OverheadResult>): void => {
  for (const r of results) {
    console.log(`\nper-step overhead: ${r.callsPerStep} tool call(s) per step, ${r.steps} steps per run, zero-latency model (medians)`)
    console.log(table(
      ["contender", "us/step", "x plain loop", "spread", ""],
      r.contenders.map((c) => [
        c.name,
        fmt(c.usPerStep, 1),
        fmt(c.ratio, 1),
        `${fmt(c.spread * 100, 0)}%`,
        c.trusted ? "" : "spread too wide to trust"
      ])
    ))
  }
}

export interface HistoryResult {
  readonly history: number
  /** Marginal cost of a step: (run of 40 steps - run of 20 steps) / 20, medians. */
  readonly plainUsPerStep: number
  readonly agentUsPerStep: number
}

/**
 * Whether a step costs more as the history grows: runs continuing a transcript of
 * 0, 1,000 and 10,000 messages, one call per step. The marginal cost per step (40-step
 * run minus 20-step run) leaves out what a run pays once to take the transcript in.
 */
export const history = async (options: BenchOptions): Promise<ReadonlyArray<HistoryResult>> => {
  const out: Array<HistoryResult> = []
  const plain = contenders[0]!
  const agent = contenders.find((c) => c.name === "Agent.run")!
  for (const h of [0, 1_000, 10_000]) {
    const mk = (steps: number) => ({ steps, calls: 1, delayMs: 0, history: h })
    const runners = [
      { name: "plain 20", run: plain.make(mk(20)) },
      { name: "plain 40", run: plain.make(mk(40)) },
      { name: "Agent.run 20", run: agent.make(mk(20)) },
      { name: "Agent.run 40", run: agent.make(mk(40)) }
    ]
    const m = await interleaved(runners, options, options.quick ? 10 : 25, 1 / 1000)
    const us = (name: string) => m.find((x) => x.name === name)!.median
    out.push({
      history: h,
      plainUsPerStep: (us("plain 40") - us("plain 20")) / 20,
      agentUsPerStep: (us("Agent.run 40") - us("Agent.run 20")) / 20
    })
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
