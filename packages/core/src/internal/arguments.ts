/** Turning raw tool-call arguments into a tool's parameters, with errors a model can act on. */
import { Tool } from "@effect/ai"
import { Effect, Either, ParseResult, Schema } from "effect"
import type * as ToolResult from "../ToolResult.js"
import * as Strict from "./strict.js"

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** `["items", 0, "qty"]` becomes `$.items[0].qty`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = "$"
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else if (typeof key === "string" && identifier.test(key)) out += `.${key}`
    else out += `[${JSON.stringify(String(key))}]`
  }
  return out
}

/** A decoder for one tool's parameters, built once per run. */
export type Decoder = (raw: unknown) => Effect.Effect<unknown, { readonly reason: "not_json" | "schema"; readonly details: ReadonlyArray<ToolResult.Detail> }>

/**
 * Decodes with the tool's real schema. A `null` the advertised (strict) schema allowed
 * for an optional field is read as the field being absent first (see `strict.ts`).
 */
export const decoder = (tool: Tool.Any): Decoder => {
  const schema = tool.parametersSchema as Schema.Schema<unknown, unknown, never>
  const decode = Schema.decodeUnknown(schema, { errors: "all" })
  return (raw) => {
    // Some providers hand arguments over as text; text that is not JSON is the model's
    // mistake, reported like any other invalid argument.
    let value = raw
    if (typeof raw === "string") {
      const parsed = Either.try(() => JSON.parse(raw) as unknown)
      if (Either.isLeft(parsed)) {
        const reason = parsed.left instanceof Error ? parsed.left.message : "unparseable"
        return Effect.fail({ reason: "not_json", details: [{ path: "$", message: reason }] })
      }
      value = parsed.right
    }
    return decode(Strict.nullsAsAbsent(schema, value)).pipe(
      Effect.mapError((error) => ({
        reason: "schema" as const,
        details: ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
          path: formatPath(issue.path),
          message: issue.message
        }))
      }))
    )
  }
}
