/**
 * The limits a run must stay within. The harness enforces each of them itself; none
 * relies on the model behaving.
 *
 * @example
 * ```ts
 * import { Budget } from "@agent-harness/core"
 *
 * const budget: Budget.Input = { maxSteps: 8, maxToolCalls: 20, maxTotalTokens: 50_000, timeout: "30 seconds" }
 * ```
 */
import { Context, Duration, Either, Schema } from "effect"

/** What a caller may pass; every field is optional and has a default. */
export interface Input {
  /** Model turns allowed (default {@link defaults}.maxSteps). Must be at least 1. */
  readonly maxSteps?: number | undefined
  /**
   * Tool calls the model may request over the whole run, counting unknown and invalid
   * ones (default {@link defaults}.maxToolCalls). A batch that does not fit is refused whole.
   */
  readonly maxToolCalls?: number | undefined
  /** Input tokens summed over the run's model calls. */
  readonly maxInputTokens?: number | undefined
  /** Output tokens summed over the run's model calls. */
  readonly maxOutputTokens?: number | undefined
  /** Total tokens summed over the run's model calls. */
  readonly maxTotalTokens?: number | undefined
  /** Deadline for the whole run, from its start; on expiry whatever runs is interrupted. */
  readonly timeout?: Duration.DurationInput | undefined
  /** Deadline of each tool call, unless its tool has a {@link CallTimeout} annotation. */
  readonly toolTimeout?: Duration.DurationInput | undefined
}

/**
 * Tool annotation: the deadline of each call of this tool. A call that runs longer is
 * interrupted and answered with a `timeout` result.
 *
 * @example
 * ```ts
 * const Fetch = Tool.make("fetch", { parameters: { url: Schema.String } }).annotate(Budget.CallTimeout, "5 seconds")
 * ```
 */
export class CallTimeout extends Context.Tag("@agent-harness/core/CallTimeout")<CallTimeout, Duration.DurationInput>() {}

/** A checked budget. */
export interface Budget {
  readonly maxSteps: number
  readonly maxToolCalls: number
  readonly maxInputTokens: number | undefined
  readonly maxOutputTokens: number | undefined
  readonly maxTotalTokens: number | undefined
  readonly timeout: Duration.Duration | undefined
  readonly toolTimeout: Duration.Duration | undefined
}

/** Defaults are finite so that a model that never stops cannot keep a run alive. */
export const defaults = { maxSteps: 20, maxToolCalls: 100 } as const

/** The budget kinds, as named by `BudgetExceeded`. */
export const Kind = Schema.Literal("steps", "toolCalls", "inputTokens", "outputTokens", "totalTokens")

/** @see {@link Kind} */
export type Kind = typeof Kind.Type

const positive = (name: string, value: number | undefined, issues: Array<string>, min = 1) => {
  if (value === undefined) return
  if (!Number.isSafeInteger(value) || value < min) {
    issues.push(`budget.${name} must be an integer >= ${min}, got ${String(value)}`)
  }
}

/** A finite positive duration, or an issue naming the option. */
export const duration = (
  name: string,
  input: Duration.DurationInput | undefined,
  issues: Array<string>
): Duration.Duration | undefined => {
  if (input === undefined) return undefined
  const decoded = Duration.decodeUnknown(input)
  if (decoded._tag === "None" || !Duration.isFinite(decoded.value) || Duration.toMillis(decoded.value) <= 0) {
    issues.push(`${name} must be a finite positive duration, got ${String(input)}`)
    return undefined
  }
  return decoded.value
}

/** Checks a budget; the left side lists every problem found. */
export const make = (input: Input = {}): Either.Either<Budget, ReadonlyArray<string>> => {
  const issues: Array<string> = []
  positive("maxSteps", input.maxSteps, issues)
  positive("maxToolCalls", input.maxToolCalls, issues, 0)
  positive("maxInputTokens", input.maxInputTokens, issues)
  positive("maxOutputTokens", input.maxOutputTokens, issues)
  positive("maxTotalTokens", input.maxTotalTokens, issues)
  const timeout = duration("budget.timeout", input.timeout, issues)
  const toolTimeout = duration("budget.toolTimeout", input.toolTimeout, issues)
  if (issues.length > 0) return Either.left(issues)
  return Either.right({
    maxSteps: input.maxSteps ?? defaults.maxSteps,
    maxToolCalls: input.maxToolCalls ?? defaults.maxToolCalls,
    maxInputTokens: input.maxInputTokens,
    maxOutputTokens: input.maxOutputTokens,
    maxTotalTokens: input.maxTotalTokens,
    timeout,
    toolTimeout
  })
}
