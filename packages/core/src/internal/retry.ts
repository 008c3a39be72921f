/** Retrying one model call under a `Retry.Policy`, inside the run's deadline. */
import { Clock, Duration, Effect, Either, ScheduleDecision, ScheduleIntervals } from "effect"
import * as Retry from "../Retry.js"
import * as Model from "./model.js"

/** What the loop is told before each wait, to emit its event and span event. */
export interface Attempt {
  /** The attempt that failed, from 1. */
  readonly attempt: number
  readonly failure: Model.ModelFailure
  readonly delayMs: number
  readonly retryAfterMs: number | undefined
}

const giveUp = (failure: Model.ModelFailure, why: string): Effect.Effect<never, Model.ModelFailure> =>
  Effect.fail({ reason: failure.reason, description: `${failure.description} (${why})`, cause: failure.cause })

/**
 * Runs `attempt` until it succeeds, fails for good, or the policy or the deadline (epoch
 * ms on `Clock`) says stop. The schedule is stepped here rather than by `Effect.retry`
 * because each delay must be weighed against `retry-after` and the deadline before the
 * wait starts, and announced.
 */
export const retrying = <A>(
  attempt: Effect.Effect<A, Model.ModelFailure>,
  policy: Retry.Policy,
  deadline: number | undefined,
  onRetry: (attempt: Attempt) => Effect.Effect<void>
): Effect.Effect<A, Model.ModelFailure> => {
  if (policy.maxAttempts === 1) return attempt
  // The first attempt goes straight through: the schedule is only built for a failure
  // that may pass, so a run whose calls succeed pays one clock read per call.
  return Effect.flatMap(Clock.currentTimeMillis, (firstStarted) =>
    Effect.catchAll(attempt, (firstFailure) =>
      firstFailure.retryable !== true ? Effect.fail(firstFailure) : retryFrom(firstFailure, firstStarted, attempt, policy, deadline, onRetry)))
}

const retryFrom = <A>(
  firstFailure: Model.ModelFailure,
  firstStarted: number,
  attempt: Effect.Effect<A, Model.ModelFailure>,
  policy: Retry.Policy,
  deadline: number | undefined,
  onRetry: (attempt: Attempt) => Effect.Effect<void>
): Effect.Effect<A, Model.ModelFailure> => {
  const schedule = Retry.schedule(policy)
  const maxDelayMs = Duration.toMillis(policy.maxDelay)
  return Effect.gen(function*() {
    let state: unknown = schedule.initial
    let failure = firstFailure
    let started = firstStarted
    for (let n = 1;; n++) {
      if (failure.retryable !== true) return yield* Effect.fail(failure)
      const now = yield* Clock.currentTimeMillis
      const [next, , decision] = yield* schedule.step(now, failure, state)
      if (ScheduleDecision.isDone(decision)) return yield* giveUp(failure, `gave up after ${n} attempts`)
      state = next
      const retryAfterMs = Model.retryAfterMillis(failure, now)
      if (retryAfterMs !== undefined && retryAfterMs > maxDelayMs) {
        return yield* giveUp(failure, `the provider asked to wait ${retryAfterMs} ms, more than retry.maxDelay`)
      }
      // Jitter gives fractions of a millisecond; clocks sleep in whole ones.
      const delayMs = Math.ceil(Math.max(ScheduleIntervals.start(decision.intervals) - now, retryAfterMs ?? 0))
      // The failed attempt's duration stands in for the next one's: a retry that could
      // not finish before the deadline only delays the error.
      if (deadline !== undefined && now + delayMs + (now - started) >= deadline) {
        return yield* giveUp(failure, `no time for attempt ${n + 1} before the deadline`)
      }
      yield* onRetry({ attempt: n, failure, delayMs, retryAfterMs })
      yield* Effect.sleep(Duration.millis(delayMs))
      started = yield* Clock.currentTimeMillis
      const outcome = yield* Effect.either(attempt)
      if (Either.isRight(outcome)) return outcome.right
      failure = outcome.left
    }
  })
}
