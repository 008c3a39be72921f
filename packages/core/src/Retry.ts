/**
 * How a run retries a model call that failed for a reason that may pass: a rate limit
 * (429), a timeout (408), an overloaded or failing provider (5xx, 529), a dropped
 * connection or a body that stopped midway. Bad requests, authentication failures, an
 * exhausted quota and malformed output are not retried.
 *
 * Delays grow exponentially from `initialDelay` with jitter (Effect's `Schedule`), never
 * shorter than the provider's `retry-after`/`retry-after-ms`, and no retry starts that
 * could not finish before the run's deadline. Each retry is a `ModelCallRetrying` event
 * and an event on the `chat` span. A retried call never repeats a tool: tools only run
 * after a model call has succeeded.
 *
 * @example
 * ```ts
 * Agent.run({ prompt, toolkit, retry: { maxAttempts: 6, initialDelay: "1 second" } })
 * Agent.run({ prompt, toolkit, retry: false }) // one attempt per step
 * ```
 */
import { Duration, Either, Schedule } from "effect"

/** What a caller may set; see {@link defaults}. */
export interface Input {
  /** Attempts per model call, the first one included; 1 turns retries off. */
  readonly maxAttempts?: number | undefined
  /** The delay before the first retry; each next one doubles (then jitter 0.8x-1.2x). */
  readonly initialDelay?: Duration.DurationInput | undefined
  /**
   * The longest wait between attempts. A provider that asks (with `retry-after`) for a
   * longer one ends the run with its error instead of holding it.
   */
  readonly maxDelay?: Duration.DurationInput | undefined
}

/** A checked retry policy. */
export interface Policy {
  readonly maxAttempts: number
  readonly initialDelay: Duration.Duration
  readonly maxDelay: Duration.Duration
}

/** Four attempts, 500 ms, then 1 s and 2 s (jittered), waits up to 30 s. */
export const defaults: Policy = {
  maxAttempts: 4,
  initialDelay: Duration.millis(500),
  maxDelay: Duration.seconds(30)
}

/** No retries. */
export const none: Policy = { ...defaults, maxAttempts: 1 }

const decode = (name: string, input: Duration.DurationInput | undefined, fallback: Duration.Duration, issues: Array<string>) => {
  if (input === undefined) return fallback
  const decoded = Duration.decodeUnknown(input)
  if (decoded._tag === "None" || !Duration.isFinite(decoded.value) || Duration.toMillis(decoded.value) < 0) {
    issues.push(`${name} must be a finite, non-negative duration, got ${String(input)}`)
    return fallback
  }
  return decoded.value
}

/**
 * Checks a policy; `false` means no retries.
 *
 * @example
 * ```ts
 * Retry.make({ maxAttempts: 0 }) // Either.left(["retry.maxAttempts must be an integer >= 1, got 0"])
 * ```
 */
export const make = (input: Input | false = {}): Either.Either<Policy, ReadonlyArray<string>> => {
  if (input === false) return Either.right(none)
  const issues: Array<string> = []
  const maxAttempts = input.maxAttempts ?? defaults.maxAttempts
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) {
    issues.push(`retry.maxAttempts must be an integer >= 1, got ${String(input.maxAttempts)}`)
  }
  const initialDelay = decode("retry.initialDelay", input.initialDelay, defaults.initialDelay, issues)
  const maxDelay = decode("retry.maxDelay", input.maxDelay, defaults.maxDelay, issues)
  if (Duration.lessThan(maxDelay, initialDelay)) issues.push("retry.maxDelay must not be shorter than retry.initialDelay")
  return issues.length > 0 ? Either.left(issues) : Either.right({ maxAttempts, initialDelay, maxDelay })
}

/**
 * The policy's delays as a `Schedule`: exponential from `initialDelay`, jittered, capped
 * at `maxDelay`, for `maxAttempts - 1` retries. The harness steps it itself so that it
 * can weigh each delay against `retry-after` and the deadline before waiting.
 */
export const schedule = (policy: Policy): Schedule.Schedule<Duration.Duration, unknown> =>
  Schedule.exponential(policy.initialDelay, 2).pipe(
    Schedule.jittered,
    Schedule.modifyDelay((_, delay) => Duration.min(delay, policy.maxDelay)),
    Schedule.intersect(Schedule.recurs(policy.maxAttempts - 1)),
    Schedule.map(([delay]) => delay)
  )
