/**
 * Context selection: choosing the view of histories of 1,000, 10,000 and 100,000
 * messages, against a naive selector that re-serialises the candidate view each time it
 * considers one more group. Both in one process, interleaved, medians reported.
 *
 * Suite 4 of `npm run bench`; also runs alone:
 *
 *   npm run bench:context
 */
import { ContextWindow, Transcript } from "@agent-harness/core"
import { Prompt } from "@effect/ai"
import { Either } from "effect"
import { pathToFileURL } from "node:url"
import { median, minRuns, minWarmup } from "./common.js"

/** A deterministic PRNG, so every run measures the same histories. */
const rng = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}

const makeHistory = (messages: number): Array<Prompt.Message> => {
  const random = rng(42)
  const out: Array<Prompt.Message> = [
    Prompt.makeMessage("system", { content: "You are a careful assistant." }),
    Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: "Reconcile the ledger." })] })
  ]
  let id = 0
  while (out.length < messages) {
    const calls = 1 + Math.floor(random() * 3)
    const ids = Array.from({ length: calls }, () => `call_${id++}`)
    out.push(Prompt.makeMessage("assistant", {
      content: ids.map((callId) =>
        Prompt.makePart("tool-call", { id: callId, name: "lookup", params: { account: Math.floor(random() * 1e6) }, providerExecuted: false })
      )
    }))
    out.push(Prompt.makeMessage("tool", {
      content: ids.map((callId) =>
        Prompt.makePart("tool-result", {
          id: callId,
          name: "lookup",
          isFailure: false,
          result: { status: "success", data: "x".repeat(20 + Math.floor(random() * 200)) },
          providerExecuted: false
        })
      )
    }))
  }
  return out
}

/** Groups newest first, adding one while the re-serialised candidate still fits. */
const naiveSelect = (history: ReadonlyArray<Prompt.Message>, limit: number): Array<Prompt.Message> => {
  const pinned = history.slice(0, 2)
  const groups: Array<Array<Prompt.Message>> = []
  for (let i = 2; i < history.length; i++) {
    if (history[i]!.role === "tool") groups[groups.length - 1]!.push(history[i]!)
    else groups.push([history[i]!])
  }
  let kept: Array<Prompt.Message> = []
  for (let g = groups.length - 1; g >= 0; g--) {
    const candidate = [...groups[g]!, ...kept]
    if (JSON.stringify([...pinned, ...candidate]).length > limit) break
    kept = candidate
  }
  return [...pinned, ...kept]
}

const time = (f: () => unknown): number => {
  const t0 = performance.now()
  f()
  return performance.now() - t0
}

/** One size of history: our selector against the naive one. */
export type ContextRow = { messages: number; indexMs: number; oursUs: number; naiveMs: number; ratio: number }

/** Measures context selection; `warmup` and `runs` are rounds (the naive selector at 100,000 messages runs once). */
export const contextBench = (options: { readonly warmup: number; readonly runs: number } = { warmup: minWarmup, runs: minRuns }): Array<ContextRow> => {
  const sizes = [1_000, 10_000, 100_000]
  const { warmup } = options
  const rows: Array<ContextRow> = []
  for (const n of sizes) {
    const history = makeHistory(n)
    if (Either.isLeft(Transcript.check(history))) throw new Error("the generated history is invalid")
    // A window holding about a twentieth of the history, as JSON characters for the naive
    // selector and content characters for ours: both keep a similar share.
    const jsonLimit = Math.floor(JSON.stringify(history).length / 20)
    const index = ContextWindow.makeIndex()
    const indexMs = time(() => {
      for (const message of history) ContextWindow.append(index, message, ContextWindow.charSize(message))
    })
    const charLimit = Math.floor(index.prefix[index.length]! / 20)
    const ours: Array<number> = []
    const naive: Array<number> = []
    const naiveRuns = n >= 100_000 ? 1 : options.runs
    for (let i = 0; i < warmup + Math.max(options.runs, naiveRuns); i++) {
      // Interleaved: one of each per round, so drift of the machine hits both alike.
      const o = time(() => {
        for (let k = 0; k < 1000; k++) ContextWindow.select(index, charLimit)
      }) / 1000
      const nv = i < warmup + naiveRuns && (n < 100_000 || i >= warmup) ? time(() => naiveSelect(history, jsonLimit)) : undefined
      if (i >= warmup) {
        ours.push(o)
        if (nv !== undefined) naive.push(nv)
      }
    }
    const oursMs = median(ours)
    const naiveMs = median(naive)
    rows.push({ messages: n, indexMs, oursUs: oursMs * 1000, naiveMs, ratio: naiveMs / (indexMs + oursMs) })
  }
  return rows
}

export const printContext = (rows: ReadonlyArray<ContextRow>): void => {
  const pad = (s: string, w: number) => s.padStart(w)
  console.log("context selection, medians. 'ours select' chooses a view from sizes kept as messages are recorded;")
  console.log("'ours index' measures every message once (a run pays it one message at a time); the ratio compares")
  console.log("the naive selector with ours from scratch (index + select).")
  console.log(`${pad("messages", 9)} ${pad("ours select", 13)} ${pad("ours index", 12)} ${pad("naive select", 14)} ${pad("naive/ours", 12)}`)
  for (const r of rows) {
    console.log(
      `${pad(r.messages.toLocaleString("en"), 9)} ${pad(r.oursUs.toFixed(2) + " us", 13)} ${pad(r.indexMs.toFixed(1) + " ms", 12)} ${pad(r.naiveMs.toFixed(1) + " ms", 14)} ${pad(r.ratio.toFixed(0) + "x", 12)}`
    )
  }
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1]!
    const b = rows[i]!
    console.log(`growth ${a.messages} -> ${b.messages}: ours select x${(b.oursUs / a.oursUs).toFixed(1)}, ours index x${(b.indexMs / a.indexMs).toFixed(1)}, naive x${(b.naiveMs / a.naiveMs).toFixed(1)}`)
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) printContext(contextBench())
