/**
 * Events, spans and metrics of a run. Spans and metric names follow the OpenTelemetry
 * GenAI semantic conventions; they come from Effect's tracer, so core has no
 * OpenTelemetry dependency (`@agent-harness/otel` exports them).
 */
import type { Mailbox, Tracer } from "effect"
import { Cause, Clock, Effect, Metric, MetricBoundaries, MetricKey, MetricLabel } from "effect"
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

const tokenUsageKey = MetricKey.histogram(
  "gen_ai.client.token.usage",
  MetricBoundaries.fromIterable([1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]),
  "Number of input and output tokens used"
)

const operationDurationKey = MetricKey.histogram(
  "gen_ai.client.operation.duration",
  MetricBoundaries.fromIterable([0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]),
  "GenAI operation duration, in seconds"
)

export const tokenUsage = Metric.fromMetricKey(tokenUsageKey)

export const operationDuration = Metric.fromMetricKey(operationDurationKey)

/** Attributes every model span and metric of a run shares. */
export const modelAttributes = (settings: Settings): Record<string, string> => ({
  "gen_ai.operation.name": "chat",
  ...(settings.provider === undefined ? {} : { "gen_ai.provider.name": settings.provider }),
  ...(settings.model === undefined ? {} : { "gen_ai.request.model": settings.model })
})

type Histogram = ReturnType<typeof Metric.fromMetricKey<ReturnType<typeof MetricKey.histogram>["keyType"]>>

interface ModelMetrics {
  readonly duration: Histogram
  readonly input: Histogram
  readonly output: Histogram
}

// A metric tagged with `Metric.tagged` looks its series up in the registry, hashing its
// key, on every update; one built from an already tagged key finds it once and keeps it.
// The combinations of provider, model and error type a process sees are few.
const modelMetricsCache = new Map<string, ModelMetrics>()

const modelMetrics = (settings: Settings, errorType: string | undefined): ModelMetrics => {
  const cacheKey = JSON.stringify([settings.provider ?? null, settings.model ?? null, errorType ?? null])
  const cached = modelMetricsCache.get(cacheKey)
  if (cached !== undefined) return cached
  const labels = Object.entries(modelAttributes(settings)).map(([key, value]) => MetricLabel.make(key, value))
  const durationLabels = errorType === undefined ? labels : [...labels, MetricLabel.make("error.type", errorType)]
  const tokens = (type: string) =>
    Metric.fromMetricKey(MetricKey.taggedWithLabels(tokenUsageKey, [MetricLabel.make("gen_ai.token.type", type), ...labels]))
  const metrics: ModelMetrics = {
    duration: Metric.fromMetricKey(MetricKey.taggedWithLabels(operationDurationKey, durationLabels)),
    input: tokens("input"),
    output: tokens("output")
  }
  modelMetricsCache.set(cacheKey, metrics)
  return metrics
}

/** Records a model call's duration and token counts as GenAI metrics. */
export const recordModelMetrics = (
  settings: Settings,
  durationMs: number,
  usage: { readonly inputTokens?: number | undefined; readonly outputTokens?: number | undefined } | undefined,
  errorType: string | undefined
): Effect.Effect<void> => {
  const metrics = modelMetrics(settings, errorType)
  const duration = Metric.update(metrics.duration, durationMs / 1000)
  const input = usage?.inputTokens
  const output = usage?.outputTokens
  if (input === undefined && output === undefined) return duration
  return Effect.all([
    duration,
    input === undefined ? Effect.void : Metric.update(metrics.input, input),
    output === undefined ? Effect.void : Metric.update(metrics.output, output)
  ], { discard: true })
}

/** Adds an event to the current span, if there is one; time from `Clock`. */
export const spanEvent = (name: string, attributes: Record<string, unknown>): Effect.Effect<void> =>
  Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    span._tag === "None"
      ? Effect.void
      : Effect.map(Clock.currentTimeNanos, (now) => span.value.event(name, now, attributes)))

// Effect's built-in tracer, in place when no tracer was installed: its spans go nowhere.
const defaultTracer = Effect.runSync(Effect.tracer)

/**
 * `Effect.withSpan`, unless the tracer is Effect's built-in one, which exports nothing:
 * then the span would only cost time (a few microseconds each, several per step), so it
 * is not made. `options` is only evaluated when the span is.
 */
export const withSpan = (name: string, options: () => Tracer.SpanOptions) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) => tracer === defaultTracer ? self : Effect.withSpan(self, name, options()))
