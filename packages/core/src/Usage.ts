/**
 * Token accounting for a run.
 *
 * Every figure is optional: a figure is present only when at least one model call
 * reported it, so a provider that reports nothing never shows up as "0 tokens".
 *
 * @example
 * ```ts
 * import { Usage } from "@agent-harness/core"
 *
 * const total = Usage.add(Usage.empty, { inputTokens: 12, outputTokens: 3 })
 * // Either.right({ calls: 1, reportedCalls: 1, inputTokens: 12, outputTokens: 3, totalTokens: 15 })
 * ```
 */
import { Either, Schema } from "effect"

const Count = Schema.Int.pipe(Schema.nonNegative(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER))

/** The token figures one model call reports; any of them may be missing. */
export interface Reported {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly totalTokens?: number | undefined
  readonly reasoningTokens?: number | undefined
  readonly cachedInputTokens?: number | undefined
}

/** Usage summed over the model calls of a run. */
export const Usage = Schema.Struct({
  /** Model calls made. */
  calls: Count,
  /** Model calls that reported at least one token figure. */
  reportedCalls: Count,
  inputTokens: Schema.optional(Count),
  outputTokens: Schema.optional(Count),
  totalTokens: Schema.optional(Count),
  reasoningTokens: Schema.optional(Count),
  cachedInputTokens: Schema.optional(Count)
}).annotations({ identifier: "Usage" })

/** @see {@link Usage} */
export type Usage = typeof Usage.Type

/** No calls made yet. */
export const empty: Usage = { calls: 0, reportedCalls: 0 }

const fields = ["inputTokens", "outputTokens", "totalTokens", "reasoningTokens", "cachedInputTokens"] as const

const isCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 0

/** One call's figures with a missing total derived from input plus output when both are known. */
export const normalize = (reported: Reported): Reported =>
  reported.totalTokens === undefined && reported.inputTokens !== undefined && reported.outputTokens !== undefined
    ? { ...reported, totalTokens: reported.inputTokens + reported.outputTokens }
    : reported

/**
 * Checks one call's figures and adds them to the running total. A missing total is
 * derived from input plus output when both are known.
 *
 * Fails (with a message naming the field) on negative, fractional, non-finite or
 * unsafe counts, and on a sum that would leave the safe integer range.
 */
export const add = (usage: Usage, reported: Reported): Either.Either<Usage, string> => {
  const call: Record<string, number> = {}
  const normalized = normalize(reported)
  for (const field of fields) {
    const value = normalized[field]
    if (value === undefined) continue
    if (typeof value !== "number" || !isCount(value)) {
      return Either.left(`usage.${field} must be a non-negative safe integer, got ${String(value)}`)
    }
    call[field] = value
  }
  const next: { -readonly [K in keyof Usage]: Usage[K] } = {
    ...usage,
    calls: usage.calls + 1,
    reportedCalls: usage.reportedCalls + (Object.keys(call).length > 0 ? 1 : 0)
  }
  for (const field of fields) {
    const value = call[field]
    if (value === undefined) continue
    const sum = (usage[field] ?? 0) + value
    if (!Number.isSafeInteger(sum)) {
      return Either.left(`usage.${field} total would exceed ${Number.MAX_SAFE_INTEGER}`)
    }
    next[field] = sum
  }
  return Either.right(next)
}
