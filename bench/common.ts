/** Options, statistics and table printing shared by the benchmarks. */

/** Options of one `npm run bench`. */
export interface BenchOptions {
  readonly quick: boolean
  readonly warmup: number
  readonly runs: number
  readonly only: ReadonlyArray<string> | undefined
  readonly json: string
  /** Relative interquartile range above which a figure is flagged as untrustworthy. */
  readonly maxSpread: number
}

/** Below this many warm-up rounds the JIT has not settled and the first figures lie. */
export const minWarmup = 3
/** Below this many measured rounds a median says little. */
export const minRuns = 5

export const suites = ["overhead", "concurrency", "batch", "context"] as const

const usage = `usage: npm run bench -- [--quick] [--warmup N>=${minWarmup}] [--runs N>=${minRuns}] [--only ${suites.join(",")}] [--json FILE] [--max-spread 0.25]`

/** Parses argv by hand; a bad option is a one-line error and a non-zero exit. */
export const parseOptions = (argv: ReadonlyArray<string>): BenchOptions => {
  const fail = (message: string, showUsage = true): never => {
    console.error(showUsage ? `bench: ${message}\n${usage}` : `bench: ${message}`)
    process.exit(2)
  }
  let quick = false
  let warmup: number | undefined
  let runs: number | undefined
  let only: Array<string> | undefined
  let json = new URL("./results.json", import.meta.url).pathname
  let maxSpread = 0.25
  const int = (flag: string, value: string | undefined): number => {
    const n = Number(value)
    if (value === undefined || !Number.isSafeInteger(n)) return fail(`${flag} takes an integer, got '${String(value)}'`)
    return n
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    switch (arg) {
      case "--quick":
        quick = true
        break
      case "--warmup":
        warmup = int(arg, argv[++i])
        break
      case "--runs":
        runs = int(arg, argv[++i])
        break
      case "--only": {
        const names = (argv[++i] ?? "").split(",").filter((s) => s.length > 0)
        const unknown = names.filter((n) => !(suites as ReadonlyArray<string>).includes(n))
        if (names.length === 0 || unknown.length > 0) fail(`--only takes some of ${suites.join(",")}, got '${unknown.join(",")}'`)
        only = names
        break
      }
      case "--json": {
        const file = argv[++i]
        if (file === undefined) fail("--json takes a file name")
        json = file!
        break
      }
      case "--max-spread": {
        const n = Number(argv[++i])
        if (!(n > 0)) fail("--max-spread takes a positive number")
        maxSpread = n
        break
      }
      default:
        fail(`unknown option '${arg}'`)
    }
  }
  if (warmup !== undefined && warmup < minWarmup) {
    fail(`refusing to run with ${warmup} warm-up round(s): at least ${minWarmup} are required before anything is measured`, false)
  }
  if (runs !== undefined && runs < minRuns) fail(`refusing to run with ${runs} measured round(s): at least ${minRuns} are required`, false)
  return {
    quick,
    warmup: warmup ?? (quick ? minWarmup : 5),
    runs: runs ?? (quick ? minRuns : 15),
    only,
    json,
    maxSpread
  }
}

export const median = (xs: ReadonlyArray<number>): number => quantile(xs, 0.5)

export const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  if (xs.length === 0) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  const pos = (s.length - 1) * q
  const lo = Math.floor(pos)
  const hi = Math.ceil(pos)
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo)
}

/** Interquartile range relative to the median: how far apart the rounds were. */
export const spread = (xs: ReadonlyArray<number>): number => (quantile(xs, 0.75) - quantile(xs, 0.25)) / median(xs)

export const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect === undefined) throw new Error("run node with --expose-gc (npm run bench does)")
  collect()
  collect()
}

/** Prints rows of cells as a right-aligned table, the first column left-aligned. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n")
}

export const fmt = (n: number, digits = 1): string =>
  Number.isFinite(n) ? n.toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits }) : "-"
