/**
 * Events, spans and metrics of a run. Spans and metric names follow the OpenTelemetry
 * GenAI semantic conventions; they come from Effect's tracer, so core has no
 * OpenTelemetry dependency (`@agent-harness/otel` exports them).
 */
import type { Mailbox } from "effect"
import { Cause, Clock, Effect, Metric, MetricBoundaries } from "effect"
import type * as HarnessEvent from "../HarnessEvent.js"

/** How a run describes itself in spans, and whether payloads are recorded. */
export interface Settings {
  readonly agentName: string
  readonly provider: string | undefined
  readonly model: string | undefined
  readonly recordPayloads: boolean
}

/** Where a run's events go. */
export interface Sinks {
  readonly observer: ((event: HarnessEvent.HarnessEvent) => Effect.Effect<unknown, unknown>) | undefined
  readonly onObserverError: ((cause: Cause.Cause<unknown>) => Effect.Effect<void>) | undefined
  readonly mailbox: Mailbox.Mailbox<HarnessEvent.HarnessEvent, unknown> | undefined
}

type Base = { readonly runId: string; readonly seq: number; readonly timestamp: number }

/** Numbers events in order and hands them to the observer and the stream. */
export class Emitter {
  private seq = 0
  readonly active: boolean
  private readonly lock = Effect.unsafeMakeSemaphore(1)

  constructor(readonly runId: string, readonly sinks: Sinks) {
    this.active = sinks.observer !== undefined || sinks.mailbox !== undefined
  }

  /**
   * Emits one event. Observers see events one at a time, in sequence order, also when
   * concurrent tool calls emit at once; an observer that fails or dies is reported to
   * `onObserverError` and changes nothing about the run.
   */
  emit(make: (base: Base) => HarnessEvent.HarnessEvent): Effect.Effect<void> {
    if (!this.active) return Effect.void
    return this.lock.withPermits(1)(
      Effect.flatMap(Clock.currentTimeMillis, (timestamp) => {
        const event = make({ runId: this.runId, seq: this.seq++, timestamp })
        this.sinks.mailbox?.unsafeOffer(event)
        const observer = this.sinks.observer
        if (observer === undefined) return Effect.void
        const onError = this.sinks.onObserverError
        return Effect.catchAllCause(
          Effect.suspend(() => observer(event)),
          (cause) => onError === undefined || Cause.isInterruptedOnly(cause) ? Effect.void : Effect.catchAllCause(onError(cause), () => Effect.void)
        )
      })
    )
  }
}

/** Milliseconds since `start` (from `Clock.currentTimeNanos`). */
export const elapsedMs = (start: bigint): Effect.Effect<number> =>
  Effect.map(Clock.currentTimeNanos, (now) => Number(now - start) / 1e6)

export const tokenUsage = Metric.histogram(
  "gen_ai.client.token.usage",
  MetricBoundaries.fromIterable([1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]),
  "Number of input and output tokens used"
)

export const operationDuration = Metric.histogram(
  "gen_ai.client.operation.duration",
  MetricBoundaries.fromIterable([0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]),
  "GenAI operation duration, in seconds"
)

/** Attributes every model span and metric of a run shares. */
export const modelAttributes = (settings: Settings): Record<string, string> => ({
  "gen_ai.operation.name": "chat",
  ...(settings.provider === undefined ? {} : { "gen_ai.provider.name": settings.provider }),
  ...(settings.model === undefined ? {} : { "gen_ai.request.model": settings.model })
})

/** Records a model call's duration and token counts as GenAI metrics. */
export const recordModelMetrics = (
  settings: Settings,
  durationMs: number,
  usage: { readonly inputTokens?: number | undefined; readonly outputTokens?: number | undefined } | undefined,
  errorType: string | undefined
): Effect.Effect<void> => {
  const tags = { ...modelAttributes(settings), ...(errorType === undefined ? {} : { "error.type": errorType }) }
  let duration = operationDuration
  for (const [key, value] of Object.entries(tags)) duration = Metric.tagged(duration, key, value)
  const recordTokens = (type: string, value: number | undefined) => {
    if (value === undefined) return Effect.void
    let metric = Metric.tagged(tokenUsage, "gen_ai.token.type", type)
    for (const [key, v] of Object.entries(modelAttributes(settings))) metric = Metric.tagged(metric, key, v)
    return Metric.update(metric, value)
  }
  return Effect.all([
    Metric.update(duration, durationMs / 1000),
    recordTokens("input", usage?.inputTokens),
    recordTokens("output", usage?.outputTokens)
  ], { discard: true })
}

/** Adds an event to the current span, if there is one; time from `Clock`. */
export const spanEvent = (name: string, attributes: Record<string, unknown>): Effect.Effect<void> =>
  Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    span._tag === "None"
      ? Effect.void
      : Effect.map(Clock.currentTimeNanos, (now) => span.value.event(name, now, attributes)))
