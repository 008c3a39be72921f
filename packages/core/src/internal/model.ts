/**
 * One model call, made the way the harness needs it: tools advertised with their real
 * JSON Schemas, tool-call resolution off, arguments decoded permissively so that a bad
 * call stays tied to its id, and the response envelope checked before anything acts on it.
 */
import { AiError, LanguageModel, Prompt, Response, Tool, Toolkit } from "@effect/ai"
import { Effect, Either, ParseResult, Predicate, Schema, Stream } from "effect"
import type { ModelErrorReason } from "../AgentError.js"
import type * as Usage from "../Usage.js"
import * as Strict from "./strict.js"

/** A failed call or a bad envelope; the loop turns it into a `ModelError` with its snapshot. */
export interface ModelFailure {
  readonly reason: ModelErrorReason
  readonly description: string
  readonly cause?: unknown
  /** The same request may succeed later (see `Retry`); absent means it will not. */
  readonly retryable?: true
}

/** A checked response. */
export interface ModelTurn {
  /** The assistant message to record; provider metadata kept on every part. */
  readonly message: Prompt.AssistantMessage | undefined
  /** Calls the harness must execute, in the order the model made them. */
  readonly calls: ReadonlyArray<Prompt.ToolCallPart>
  readonly text: string
  readonly finishReason: Response.FinishReason
  readonly usage: Usage.Reported | undefined
}

/** What a run prepares once and uses for every model call. */
export interface Wire {
  readonly toolkit: Toolkit.WithHandler<Record<string, Tool.Any>>
  /** The schema of a response part, for recovering refused responses; built on first use. */
  readonly partSchema: () => Schema.Schema<Response.Part<Record<string, Tool.Any>>, Response.PartEncoded>
  /** Ask with `streamText` and collect the stream, instead of `generateText`. */
  readonly streaming: boolean
}

/**
 * Any JSON object passes; the real schema is advertised (in the form every provider's
 * strict mode accepts, see `strict.ts`) and applied by the dispatcher.
 */
const permissiveParameters = (tool: Tool.Any) =>
  Schema.Struct({}, Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({
    jsonSchema: Strict.strictJsonSchema(Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast))
  })

/**
 * The tool as the model sees it. Its success and failure schemas are dropped as well:
 * `LanguageModel` rebuilds a response schema from every tool's schemas on each call, and
 * the harness never lets it decode a result of a tool it runs itself, so carrying the
 * real ones would only make every call rebuild them.
 */
const wireTool = (tool: Tool.Any): Tool.Any =>
  Tool.isUserDefined(tool)
    ? tool.setParameters(permissiveParameters(tool)).setSuccess(Schema.Unknown).setFailure(Schema.Unknown)
    : tool

// Toolkits are usually module constants: their wire form (JSON Schemas derived once) is
// shared by every run that uses the same record of tools.
const wires = new WeakMap<Record<string, Tool.Any>, Omit<Wire, "streaming">>()

export const makeWire = (tools: Record<string, Tool.Any>, streaming = false): Wire => {
  const cached = wires.get(tools)
  if (cached !== undefined) return { ...cached, streaming }
  const wireTools: Record<string, Tool.Any> = {}
  for (const [name, tool] of Object.entries(tools)) wireTools[name] = wireTool(tool)
  const toolkit: Toolkit.WithHandler<Record<string, Tool.Any>> = {
    tools: wireTools,
    // Never called: the harness disables tool-call resolution and dispatches itself.
    handle: (name) => Effect.die(`tool '${String(name)}' must be dispatched by the harness`)
  }
  let partSchema: Schema.Schema<Response.Part<Record<string, Tool.Any>>, Response.PartEncoded> | undefined
  const wire = {
    toolkit,
    partSchema: () => (partSchema ??= Response.Part(Toolkit.make(...Object.values(wireTools))))
  }
  wires.set(tools, wire)
  return { ...wire, streaming }
}

const ToolCallEncoded = Schema.Struct({
  type: Schema.Literal("tool-call"),
  id: Schema.String,
  name: Schema.String,
  params: Schema.Unknown,
  providerName: Schema.optional(Schema.String),
  providerExecuted: Schema.optional(Schema.Boolean),
  metadata: Schema.optional(Response.ProviderMetadata)
})

const statusReason = (status: number): ModelErrorReason =>
  status === 429
    ? "rate_limited"
    : status === 401 || status === 403
    ? "authentication"
    : status === 408
    ? "transport"
    : status >= 500
    ? "unavailable"
    : "bad_request"

/** Statuses worth another attempt: timeout, conflict, rate limit, server trouble. */
const transientStatus = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500

/** An exhausted quota is a 429 too, but waiting does not refill it. */
const quotaExhausted = (body: string | undefined) => body !== undefined && body.includes("insufficient_quota")

/**
 * A response whose body could not be read or decoded (`@effect/ai` keeps only "Decode",
 * not the cause), while the status said it had succeeded: a cut connection, a proxy's page.
 * With an error status, the status says more than the unreadable body.
 */
const bodyLost = (error: AiError.HttpResponseError) => error.reason !== "StatusCode" && error.response.status < 400

const responseRetryable = (error: AiError.HttpResponseError): boolean => {
  // Anthropic tells clients outright; its word beats the status.
  const should = error.response.headers["x-should-retry"]
  if (should === "true") return true
  if (should === "false") return false
  // A success whose body failed to arrive or parse is a transport fault.
  if (bodyLost(error)) return true
  return transientStatus(error.response.status) && !quotaExhausted(error.body)
}

const retryable = (yes: boolean): { readonly retryable?: true } => (yes ? { retryable: true } : {})

/** Maps `@effect/ai` errors onto the reasons a caller branches on, and says which may pass. */
export const fromAiError = (error: AiError.AiError): ModelFailure => {
  switch (error._tag) {
    case "HttpRequestError":
      return { reason: "transport", description: error.message, cause: error, ...retryable(error.reason === "Transport") }
    case "HttpResponseError":
      return {
        reason: bodyLost(error) ? "transport" : statusReason(error.response.status),
        description: error.message,
        cause: error,
        ...retryable(responseRetryable(error))
      }
    case "MalformedOutput":
      return { reason: "malformed_output", description: error.message, cause: error }
    case "MalformedInput":
      return { reason: "bad_request", description: error.message, cause: error }
    case "UnknownError":
      return { reason: "unknown", description: error.message, cause: error }
  }
}

/**
 * How long the provider asked the client to wait, in ms: `retry-after-ms` (OpenAI), or
 * `retry-after` as seconds or an HTTP date (RFC 9110), relative to `now` (epoch ms).
 */
export const retryAfterMillis = (failure: ModelFailure, now: number): number | undefined => {
  const cause = failure.cause
  if (!(cause instanceof AiError.HttpResponseError)) return undefined
  const headers = cause.response.headers
  const ms = Number(headers["retry-after-ms"])
  if (headers["retry-after-ms"] !== undefined && Number.isFinite(ms) && ms >= 0) return ms
  const value = headers["retry-after"]?.trim()
  if (value === undefined || value === "") return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/**
 * `@effect/ai` rejects a whole response when one call names a tool it does not know.
 * The parts it refused are still in the parse error; taking them back keeps that call
 * answerable (with an `UnknownTool` result) instead of failing the step.
 */
const rawParts = (error: AiError.AiError): ReadonlyArray<unknown> | undefined => {
  if (error._tag !== "MalformedOutput" || error.module !== "LanguageModel") return undefined
  if (!ParseResult.isParseError(error.cause)) return undefined
  const actual = error.cause.issue.actual
  return Array.isArray(actual) && actual.every((part) => Predicate.hasProperty(part, "type")) ? actual : undefined
}

const decodeRaw = (wire: Wire, raw: ReadonlyArray<unknown>): Either.Either<Array<Response.AnyPart>, ModelFailure> => {
  const parts: Array<Response.AnyPart> = []
  for (const [index, part] of raw.entries()) {
    const isCall = Predicate.hasProperty(part, "type") && part.type === "tool-call"
    const decoded = isCall
      ? Schema.decodeUnknownEither(ToolCallEncoded)(part).pipe(
        Either.map((call) =>
          Response.makePart("tool-call", {
            id: call.id,
            name: call.name,
            params: call.params,
            providerExecuted: call.providerExecuted ?? false,
            metadata: call.metadata ?? {},
            ...(call.providerName === undefined ? {} : { providerName: call.providerName })
          }) as Response.AnyPart
        )
      )
      : Schema.decodeUnknownEither(wire.partSchema())(part).pipe(Either.map((p): Response.AnyPart => p))
    if (Either.isLeft(decoded)) {
      return Either.left({
        reason: "malformed_output",
        description: `response part ${index} is malformed: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`
      })
    }
    parts.push(decoded.right)
  }
  return Either.right(parts)
}

type Metadata = Record<string, Record<string, unknown> | undefined>

/** Later pieces of a streamed part add to its metadata; an undefined value never erases one. */
const mergeMetadata = (into: Metadata, from: Response.ProviderMetadata | undefined): void => {
  for (const [provider, values] of Object.entries(from ?? {})) {
    if (values === undefined) continue
    const merged: Record<string, unknown> = { ...into[provider] }
    for (const [key, value] of Object.entries(values)) if (value !== undefined) merged[key] = value
    into[provider] = merged
  }
}

interface Block {
  readonly type: "text" | "reasoning"
  text: string
  readonly metadata: Metadata
}

/**
 * Folds a stream into the parts `generateText` would have returned: deltas joined per
 * block (in the order the blocks started), the metadata of a block's start, deltas and
 * end merged, so that a signature or encrypted reasoning sent at the end is kept.
 */
export const collectStream = (
  parts: Iterable<Response.AnyPart>
): Either.Either<Array<Response.AnyPart>, ModelFailure> => {
  const out: Array<Response.AnyPart | Block> = []
  const open = new Map<string, Block>()
  const block = (type: Block["type"], id: string): Block => {
    const key = `${type}:${id}`
    const existing = open.get(key)
    if (existing !== undefined) return existing
    const created: Block = { type, text: "", metadata: {} }
    open.set(key, created)
    out.push(created)
    return created
  }
  for (const part of parts) {
    switch (part.type) {
      case "text-start":
      case "text-end":
        mergeMetadata(block("text", part.id).metadata, part.metadata)
        break
      case "reasoning-start":
      case "reasoning-end":
        mergeMetadata(block("reasoning", part.id).metadata, part.metadata)
        break
      case "text-delta":
      case "reasoning-delta": {
        const target = block(part.type === "text-delta" ? "text" : "reasoning", part.id)
        target.text += part.delta
        mergeMetadata(target.metadata, part.metadata)
        break
      }
      case "error":
        return Either.left({
          reason: "unavailable",
          description: `the provider reported an error in the stream: ${JSON.stringify(part.error)}`,
          cause: part.error
        })
      case "tool-params-start":
      case "tool-params-delta":
      case "tool-params-end":
        // The provider emits the whole call as a `tool-call` part once its params are complete.
        break
      default:
        out.push(part)
    }
  }
  return Either.right(out.map((item) =>
    Response.isPart(item)
      ? item
      : Response.makePart(item.type, { text: item.text, metadata: item.metadata as Response.ProviderMetadata })
  ))
}

/** Calls the model once. */
export const call = (
  model: LanguageModel.Service,
  wire: Wire,
  prompt: Prompt.Prompt
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ModelFailure> => {
  const options = { prompt, toolkit: wire.toolkit, disableToolCallResolution: true } as const
  if (wire.streaming) {
    // A streamed call has no raw-part recovery: `@effect/ai` aborts the stream on the
    // first chunk it cannot decode, so the parts after it are gone.
    return model.streamText(options).pipe(
      Stream.runCollect,
      Effect.mapError(fromAiError),
      Effect.flatMap((chunk) => collectStream(chunk))
    )
  }
  return model.generateText(options).pipe(
    Effect.map((response): ReadonlyArray<Response.AnyPart> => response.content),
    Effect.catchAll((error) => {
      const raw = rawParts(error)
      return raw === undefined ? Effect.fail(fromAiError(error)) : decodeRaw(wire, raw)
    })
  )
}

const options = (metadata: Response.ProviderMetadata | undefined): Prompt.ProviderOptions =>
  (metadata ?? {}) as Prompt.ProviderOptions

/**
 * Checks the envelope (ids present and unique, here and in the transcript so far) and
 * builds the assistant message, keeping each part's provider metadata as its options
 * so that thinking signatures and reasoning ids reach the next request.
 */
export const toTurn = (
  parts: ReadonlyArray<Response.AnyPart>,
  knownIds: ReadonlySet<string>
): Either.Either<ModelTurn, ModelFailure> => {
  const content: Array<Prompt.AssistantMessagePart> = []
  const calls: Array<Prompt.ToolCallPart> = []
  const ids = new Set<string>()
  let text = ""
  let finishReason: Response.FinishReason = "unknown"
  let usage: Usage.Reported | undefined
  for (const part of parts) {
    switch (part.type) {
      case "text":
        text += part.text
        content.push(Prompt.makePart("text", { text: part.text, options: options(part.metadata) }))
        break
      case "reasoning":
        content.push(Prompt.makePart("reasoning", { text: part.text, options: options(part.metadata) }))
        break
      case "file":
        content.push(Prompt.makePart("file", { mediaType: part.mediaType, data: part.data, options: options(part.metadata) }))
        break
      case "tool-call": {
        if (part.id.length === 0) {
          return Either.left({ reason: "malformed_output", description: `a call to '${part.name}' has an empty id` })
        }
        if (ids.has(part.id) || knownIds.has(part.id)) {
          return Either.left({ reason: "malformed_output", description: `tool call id '${part.id}' is not unique` })
        }
        ids.add(part.id)
        const callPart = Prompt.makePart("tool-call", {
          id: part.id,
          name: part.providerName ?? part.name,
          params: part.params,
          providerExecuted: part.providerExecuted,
          options: options(part.metadata)
        })
        content.push(callPart)
        if (!part.providerExecuted) calls.push(callPart)
        break
      }
      case "tool-result":
        // Only provider-executed tools send results in a response; they stay in the turn.
        content.push(Prompt.makePart("tool-result", {
          id: part.id,
          name: part.providerName ?? part.name,
          isFailure: part.isFailure,
          result: part.encodedResult,
          providerExecuted: true,
          options: options(part.metadata)
        }))
        break
      case "finish":
        finishReason = part.reason
        usage = part.usage
        break
      default:
        break
    }
  }
  return Either.right({
    message: content.length === 0 ? undefined : Prompt.makeMessage("assistant", { content }),
    calls,
    text,
    finishReason,
    usage
  })
}
