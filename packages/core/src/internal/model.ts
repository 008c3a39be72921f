/**
 * One model call, made the way the harness needs it: tools advertised with their real
 * JSON Schemas, tool-call resolution off, arguments decoded permissively so that a bad
 * call stays tied to its id, and the response envelope checked before anything acts on it.
 */
import { AiError, LanguageModel, Prompt, Response, Tool, Toolkit } from "@effect/ai"
import { Effect, Either, ParseResult, Predicate, Schema } from "effect"
import type { ModelErrorReason } from "../AgentError.js"
import type * as Usage from "../Usage.js"

/** A failed call or a bad envelope; the loop turns it into a `ModelError` with its snapshot. */
export interface ModelFailure {
  readonly reason: ModelErrorReason
  readonly description: string
  readonly cause?: unknown
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
}

/** Any JSON object passes; the real schema is only advertised, and applied by the dispatcher. */
const permissiveParameters = (tool: Tool.Any) =>
  Schema.Struct({}, Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({
    jsonSchema: Tool.getJsonSchema(tool as Tool.Tool<string, {
      readonly parameters: Tool.AnyParametersSchema
      readonly success: Schema.Schema.Any
      readonly failure: Schema.Schema.All
      readonly failureMode: Tool.FailureMode
    }>)
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
const wires = new WeakMap<Record<string, Tool.Any>, Wire>()

export const makeWire = (tools: Record<string, Tool.Any>): Wire => {
  const cached = wires.get(tools)
  if (cached !== undefined) return cached
  const wireTools: Record<string, Tool.Any> = {}
  for (const [name, tool] of Object.entries(tools)) wireTools[name] = wireTool(tool)
  const toolkit: Toolkit.WithHandler<Record<string, Tool.Any>> = {
    tools: wireTools,
    // Never called: the harness disables tool-call resolution and dispatches itself.
    handle: (name) => Effect.die(`tool '${String(name)}' must be dispatched by the harness`)
  }
  let partSchema: Schema.Schema<Response.Part<Record<string, Tool.Any>>, Response.PartEncoded> | undefined
  const wire: Wire = {
    toolkit,
    partSchema: () => (partSchema ??= Response.Part(Toolkit.make(...Object.values(wireTools))))
  }
  wires.set(tools, wire)
  return wire
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

/** Maps `@effect/ai` errors onto the reasons a caller branches on. */
export const fromAiError = (error: AiError.AiError): ModelFailure => {
  switch (error._tag) {
    case "HttpRequestError":
      return { reason: "transport", description: error.message, cause: error }
    case "HttpResponseError":
      return {
        reason: error.reason === "StatusCode" ? statusReason(error.response.status) : "malformed_output",
        description: error.message,
        cause: error
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

/** Calls the model once. */
export const call = (
  model: LanguageModel.Service,
  wire: Wire,
  prompt: Prompt.Prompt
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ModelFailure> =>
  model.generateText({ prompt, toolkit: wire.toolkit, disableToolCallResolution: true }).pipe(
    Effect.map((response): ReadonlyArray<Response.AnyPart> => response.content),
    Effect.catchAll((error) => {
      const raw = rawParts(error)
      return raw === undefined ? Effect.fail(fromAiError(error)) : decodeRaw(wire, raw)
    })
  )

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
