/**
 * One layer that exports the harness's spans and GenAI metrics over OTLP/HTTP, with
 * `@effect/opentelemetry`'s OTLP exporters (no OpenTelemetry SDK needed at run time).
 *
 * Configured by options, or else by the standard environment variables:
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`),
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (full URLs),
 * `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,key2=value2`), `OTEL_EXPORTER_OTLP_PROTOCOL`
 * (`http/json`, the default, or `http/protobuf`) and `OTEL_SERVICE_NAME`.
 *
 * @example
 * ```ts
 * import { HarnessOtel } from "@agent-harness/otel"
 *
 * Agent.run({ prompt, toolkit }).pipe(Effect.provide(HarnessOtel.layer({ serviceName: "billing-agent" })))
 * ```
 */
import { FetchHttpClient } from "@effect/platform"
import { OtlpMetrics, OtlpSerialization, OtlpTracer } from "@effect/opentelemetry"
import { Config, type ConfigError, Duration, Effect, Layer, Option, Schema } from "effect"

/** Options of {@link layer}; each overrides its environment variable. */
export interface Options {
  /** Base URL of the OTLP/HTTP receiver; `/v1/traces` and `/v1/metrics` are appended. */
  readonly endpoint?: string | undefined
  readonly tracesEndpoint?: string | undefined
  readonly metricsEndpoint?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly protocol?: "http/json" | "http/protobuf" | undefined
  readonly serviceName?: string | undefined
  readonly serviceVersion?: string | undefined
  /** How often batches are sent (default 5 seconds); everything left is sent at shutdown. */
  readonly exportInterval?: Duration.DurationInput | undefined
}

/** The exporter configuration could not be used. */
export class InvalidOtelConfig extends Schema.TaggedError<InvalidOtelConfig>("@agent-harness/otel/InvalidOtelConfig")(
  "InvalidOtelConfig",
  { reason: Schema.String }
) {
  override get message() {
    return `invalid OTLP exporter configuration: ${this.reason}`
  }
}

/** The configuration after options and environment are merged. */
export interface Resolved {
  readonly tracesUrl: string
  readonly metricsUrl: string
  readonly headers: Readonly<Record<string, string>>
  readonly protocol: "http/json" | "http/protobuf"
  readonly serviceName: string
  readonly serviceVersion: string | undefined
  readonly exportInterval: Duration.DurationInput
}

const optionalString = (name: string) => Config.option(Config.string(name)).pipe(Config.map(Option.getOrUndefined))

/** `a=1,b=2` into headers; values may be percent-encoded, as the OTLP spec allows. */
export const parseHeaders = (text: string): Record<string, string> | string => {
  const headers: Record<string, string> = {}
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue
    const at = pair.indexOf("=")
    if (at <= 0) return `header '${pair.trim()}' is not key=value`
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      return `header '${pair.trim()}' is not validly percent-encoded`
    }
  }
  return headers
}

const checkUrl = (name: string, url: string): Effect.Effect<string, InvalidOtelConfig> =>
  URL.canParse(url) && /^https?:$/.test(new URL(url).protocol)
    ? Effect.succeed(url)
    : Effect.fail(new InvalidOtelConfig({ reason: `${name} must be an http(s) URL, got '${url}'` }))

/** Merges options over the `OTEL_*` environment variables and checks the result. */
export const resolve = (options: Options = {}): Effect.Effect<Resolved, InvalidOtelConfig | ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const env = yield* Config.all({
      endpoint: optionalString("OTEL_EXPORTER_OTLP_ENDPOINT"),
      traces: optionalString("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
      metrics: optionalString("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
      headers: optionalString("OTEL_EXPORTER_OTLP_HEADERS"),
      protocol: optionalString("OTEL_EXPORTER_OTLP_PROTOCOL"),
      serviceName: optionalString("OTEL_SERVICE_NAME")
    })
    const base = (options.endpoint ?? env.endpoint ?? "http://localhost:4318").replace(/\/+$/, "")
    yield* checkUrl("endpoint", base)
    const tracesUrl = yield* checkUrl("traces endpoint", options.tracesEndpoint ?? env.traces ?? `${base}/v1/traces`)
    const metricsUrl = yield* checkUrl("metrics endpoint", options.metricsEndpoint ?? env.metrics ?? `${base}/v1/metrics`)
    let headers: Readonly<Record<string, string>> = {}
    if (env.headers !== undefined) {
      const parsed = parseHeaders(env.headers)
      if (typeof parsed === "string") return yield* new InvalidOtelConfig({ reason: `OTEL_EXPORTER_OTLP_HEADERS: ${parsed}` })
      headers = parsed
    }
    headers = { ...headers, ...options.headers }
    const protocol = options.protocol ?? env.protocol ?? "http/json"
    if (protocol !== "http/json" && protocol !== "http/protobuf") {
      return yield* new InvalidOtelConfig({ reason: `protocol must be http/json or http/protobuf, got '${protocol}'` })
    }
    const exportInterval = options.exportInterval ?? "5 seconds"
    if (Option.isNone(Duration.decodeUnknown(exportInterval))) {
      return yield* new InvalidOtelConfig({ reason: `exportInterval is not a duration: ${String(exportInterval)}` })
    }
    return {
      tracesUrl,
      metricsUrl,
      headers,
      protocol,
      serviceName: options.serviceName ?? env.serviceName ?? "agent-harness",
      serviceVersion: options.serviceVersion,
      exportInterval
    }
  })

/**
 * Exports spans and metrics of everything it is provided to. Spans and metrics still
 * buffered are sent when the layer's scope closes (at the end of the program).
 */
export const layer = (options: Options = {}): Layer.Layer<never, InvalidOtelConfig | ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.map(resolve(options), (config) => {
      const resource = {
        serviceName: config.serviceName,
        ...(config.serviceVersion === undefined ? {} : { serviceVersion: config.serviceVersion })
      }
      return Layer.mergeAll(
        OtlpTracer.layer({
          url: config.tracesUrl,
          resource,
          headers: config.headers,
          exportInterval: config.exportInterval
        }),
        OtlpMetrics.layer({
          url: config.metricsUrl,
          resource,
          headers: config.headers,
          exportInterval: config.exportInterval
        })
      ).pipe(
        Layer.provide(config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
        Layer.provide(FetchHttpClient.layer)
      )
    })
  )
