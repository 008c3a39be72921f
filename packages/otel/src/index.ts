/**
 * `@agent-harness/otel`: exports the harness's spans and metrics over OTLP/HTTP.
 */
export * as HarnessOtel from "./HarnessOtel.js"
