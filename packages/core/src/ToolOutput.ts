/**
 * Bounding what a tool result puts into the transcript: the head and the tail of the
 * text are kept and a marker between them says how much was left out. The marker counts
 * inside the limit, so the bounded text is never longer than the limit.
 *
 * @example
 * ```ts
 * import { ToolOutput } from "@agent-harness/core"
 *
 * ToolOutput.truncate("a".repeat(100), 40)
 * // "aaaaaaaaa…[71 chars omitted]…aaaaaaaaa" (40 chars)
 * ```
 */
import type { AiError, Tokenizer } from "@effect/ai"
import { Effect } from "effect"
import type * as ToolResult from "./ToolResult.js"

/** The marker put where text was left out. */
export const marker = (omitted: number): string => `…[${omitted} chars omitted]…`

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff

/** Moves a cut point off the middle of a surrogate pair, so no character is broken. */
const safeCut = (text: string, index: number, towardStart: boolean): number => {
  if (index <= 0 || index >= text.length) return index
  if (!isHighSurrogate(text.charCodeAt(index - 1))) return index
  return towardStart ? index - 1 : index + 1
}

/**
 * Bounds `text` to `maxChars` characters (UTF-16 code units, as `String.length` counts).
 *
 * - Text within the limit is returned unchanged.
 * - Otherwise the head gets the larger half of the room left beside the marker, the
 *   tail the rest (an odd room gives the head one more; a room of 1 leaves the tail empty).
 * - A limit too small for the marker gives as much of the marker as fits, so the
 *   reader still sees that something was left out.
 */
export const truncate = (text: string, maxChars: number): string => {
  if (text.length <= maxChars) return text
  if (maxChars <= 0) return ""
  // The marker's length depends on the count it prints, and the count on the marker's
  // length: two rounds settle it (the count only shrinks by the marker's few digits).
  let omitted = text.length - maxChars
  let mark = marker(omitted)
  for (let round = 0; round < 3; round++) {
    omitted = text.length - Math.max(0, maxChars - mark.length)
    mark = marker(omitted)
  }
  const room = maxChars - mark.length
  if (room <= 0) return mark.slice(0, maxChars)
  const headEnd = safeCut(text, Math.ceil(room / 2), true)
  const tailStart = safeCut(text, text.length - (room - headEnd), false)
  return text.slice(0, headEnd) + marker(tailStart - headEnd) + text.slice(tailStart)
}

/**
 * Bounds `text` to `maxTokens` as counted by `tokenizer`: the longest head-and-tail cut
 * whose count fits, found by bisection (a logarithmic number of tokenizer calls).
 */
export const truncateTokens = (
  text: string,
  maxTokens: number,
  tokenizer: Tokenizer.Service
): Effect.Effect<string, AiError.AiError> =>
  Effect.gen(function*() {
    const count = (s: string) => Effect.map(tokenizer.tokenize(s), (tokens) => tokens.length)
    if ((yield* count(text)) <= maxTokens) return text
    let low = 0
    let high = text.length - 1
    while (low < high) {
      const mid = Math.ceil((low + high) / 2)
      if ((yield* count(truncate(text, mid))) <= maxTokens) low = mid
      else high = mid - 1
    }
    return truncate(text, low)
  })

/** Limits on each tool result; either or both. */
export interface Limits {
  readonly maxChars?: number | undefined
  readonly maxTokens?: number | undefined
}

const payloadText = (data: unknown): string => (typeof data === "string" ? data : JSON.stringify(data) ?? "")

const cutPayload = (
  result: ToolResult.ToolResult,
  cut: (text: string) => Effect.Effect<string, AiError.AiError>
): Effect.Effect<ToolResult.ToolResult, AiError.AiError> => {
  if (result.status === "success") {
    if (result.data === undefined) return Effect.succeed(result)
    const text = payloadText(result.data)
    return Effect.map(cut(text), (out) =>
      out === text ? result : { ...result, data: out, truncated: { originalChars: text.length } })
  }
  const error = result.error
  if (error === undefined) return Effect.succeed(result)
  return Effect.map(cut(error.message), (message) =>
    message === error.message
      ? result
      : { ...result, error: { ...error, message }, truncated: { originalChars: error.message.length } })
}

/**
 * Bounds a result envelope: a success's data (as text, JSON for anything but a string)
 * or an error's message. A bounded success carries its data as the cut text, and
 * `truncated` says how long the original was.
 *
 * The token limit needs `tokenizer`; if the tokenizer fails, the payload is cut by
 * characters instead (about four per token) and the failure is logged, so that no
 * result ever enters the transcript unbounded.
 */
export const bound = (
  result: ToolResult.ToolResult,
  limits: Limits,
  tokenizer: Tokenizer.Service | undefined
): Effect.Effect<ToolResult.ToolResult> => {
  const { maxChars, maxTokens } = limits
  const byChars = (text: string) => maxChars === undefined ? text : truncate(text, maxChars)
  if (maxTokens === undefined || tokenizer === undefined) {
    return Effect.orDie(cutPayload(result, (text) => Effect.succeed(byChars(text))))
  }
  return cutPayload(result, (text) => truncateTokens(byChars(text), maxTokens, tokenizer)).pipe(
    Effect.catchAll((error) =>
      Effect.logWarning("tokenizer failed while bounding a tool result; cutting by characters", error).pipe(
        Effect.zipRight(Effect.orDie(cutPayload(result, (text) => Effect.succeed(truncate(byChars(text), maxTokens * 4)))))
      )
    )
  )
}
