/** Interleaved rounds: every contender once per round, in a rotating order. */
import { type BenchOptions, median, spread } from "./common.js"
import type { RunOnce } from "./contenders.js"

export interface Series {
  readonly name: string
  /** One figure per measured round, in the unit the caller divides by. */
  readonly samples: Array<number>
}

export interface Measured {
  readonly name: string
  readonly median: number
  readonly spread: number
  /** Median over rounds of this contender's figure divided by the baseline's in the same round. */
  readonly ratio: number
  readonly trusted: boolean
  /** The figure of each measured round. */
  readonly samples: ReadonlyArray<number>
}

/** Median over rounds of `a`'s figure divided by `b`'s in the same round. */
export const roundRatio = (a: Measured, b: Measured): number => median(a.samples.map((x, k) => x / b.samples[k]!))

const timeReps = async (run: RunOnce, reps: number): Promise<number> => {
  const t0 = performance.now()
  for (let i = 0; i < reps; i++) await run()
  return performance.now() - t0
}

/**
 * Measures `runners` in `options.warmup + options.runs` rounds; in each round every
 * runner does `reps` runs back to back (enough to last about `targetMs`, found once
 * during warm-up), the order rotating so that no runner always follows the same one.
 * A figure is the round's milliseconds per run divided by `per`. The first runner is
 * the baseline of the ratios.
 */
export const interleaved = async (
  runners: ReadonlyArray<{ readonly name: string; readonly run: RunOnce }>,
  options: BenchOptions,
  targetMs: number,
  per: number
): Promise<Array<Measured>> => {
  const reps = runners.map(() => 1)
  const series: Array<Series> = runners.map((r) => ({ name: r.name, samples: [] }))
  const rounds = options.warmup + options.runs
  for (let round = 0; round < rounds; round++) {
    for (let j = 0; j < runners.length; j++) {
      const i = (j + round) % runners.length
      const runner = runners[i]!
      const ms = await timeReps(runner.run, reps[i]!)
      if (round < options.warmup) {
        // Calibrated on the last warm-up round, when the JIT has mostly settled.
        if (round === options.warmup - 1 || round === 0) {
          reps[i] = Math.max(1, Math.min(100_000, Math.ceil(targetMs / (ms / reps[i]!))))
        }
      } else {
        series[i]!.samples.push(ms / reps[i]! / per)
      }
    }
  }
  const base = series[0]!.samples
  return series.map((s) => {
    const ratios = s.samples.map((x, k) => x / base[k]!)
    const sp = spread(s.samples)
    return { name: s.name, median: median(s.samples), spread: sp, ratio: median(ratios), trusted: sp <= options.maxSpread, samples: s.samples }
  })
}
