/**
 * Tool parameters that every provider accepts, OpenAI's strict mode included.
 *
 * `@effect/ai-openai` sends every function tool with `strict: true` unless the caller
 * configures otherwise, and strict mode rejects a schema whose objects do not list every
 * property in `required` or allow extra properties, which is what Effect generates for
 * `Schema.optional` fields and open structs. The harness therefore advertises a rewritten
 * schema: every object closed and fully required, an optional field as "the value or
 * null", and keywords strict mode refuses left out (quoted in the description so the
 * model still reads them). The real schema stays in force: the dispatcher validates the
 * arguments with it, after {@link nullsAsAbsent} has turned the nulls that the rewritten
 * schema allowed back into absent fields.
 *
 * This is done for every provider, not only for OpenAI with `strict`: core cannot see the
 * provider's configuration, the rewritten schema is plain JSON Schema that the Anthropic
 * Messages API (and any other) accepts, and because a null and an absent field decode
 * alike, a model that leaves the field out is as right as one that sends null. The cost
 * elsewhere is small: a model is asked to write `null` for what it would have omitted.
 */
import { Either, ParseResult, Schema, type SchemaAST } from "effect"

type Node = { readonly [key: string]: unknown }

const isNode = (u: unknown): u is Node => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Keywords strict mode accepts (structure, annotations and the documented constraints:
 * https://platform.openai.com/docs/guides/structured-outputs#supported-schemas).
 */
const supported = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "enum",
  "const",
  "$ref",
  "$defs",
  "description",
  "title",
  "pattern",
  "format",
  "multipleOf",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minItems",
  "maxItems"
])

/** String formats strict mode knows. */
export const strictFormats: ReadonlySet<string> = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid"
])

const mapValues = (value: unknown, f: (node: unknown) => unknown): unknown =>
  isNode(value) ? Object.fromEntries(Object.entries(value).map(([key, node]) => [key, f(node)])) : value

/** Whether a JSON Schema already admits `null`. */
const admitsNull = (node: unknown): boolean => {
  if (!isNode(node)) return false
  const type = node.type
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true
  if (Array.isArray(node.enum) && node.enum.includes(null)) return true
  return Array.isArray(node.anyOf) && node.anyOf.some(admitsNull)
}

const orNull = (node: unknown): unknown => {
  if (admitsNull(node)) return node
  if (isNode(node) && Array.isArray(node.anyOf)) return { ...node, anyOf: [...node.anyOf, { type: "null" }] }
  return { anyOf: [node, { type: "null" }] }
}

const rewrite = (node: unknown): unknown => {
  if (!isNode(node)) return node
  const out: Record<string, unknown> = {}
  const left: Array<string> = []
  for (const [key, value] of Object.entries(node)) {
    switch (key) {
      case "properties":
      case "$defs":
        out[key] = mapValues(value, rewrite)
        break
      case "items":
        out[key] = Array.isArray(value) ? value.map(rewrite) : rewrite(value)
        break
      case "anyOf":
        out[key] = Array.isArray(value) ? value.map(rewrite) : value
        break
      case "additionalProperties":
        out[key] = isNode(value) ? rewrite(value) : value
        break
      case "format":
        if (typeof value === "string" && strictFormats.has(value)) out[key] = value
        else left.push(`${key}: ${JSON.stringify(value)}`)
        break
      default:
        if (supported.has(key)) out[key] = value
        else left.push(`${key}: ${JSON.stringify(value)}`)
    }
  }
  if (isNode(out.properties)) {
    const required = new Set(Array.isArray(node.required) ? node.required : [])
    const properties: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(out.properties)) {
      properties[key] = required.has(key) ? value : orNull(value)
    }
    out.properties = properties
    out.required = Object.keys(properties)
    // A record's value schema stays: strict mode cannot express it, and closing it would
    // forbid every key the tool expects.
    if (out.additionalProperties === undefined || out.additionalProperties === true) out.additionalProperties = false
  }
  if (left.length > 0) {
    const note = `(${left.join(", ")})`
    out.description = typeof out.description === "string" ? `${out.description} ${note}` : note
  }
  return out
}

/**
 * The JSON Schema a tool's parameters are advertised with; see the module comment.
 * Records (objects whose keys are not known in advance) cannot be made strict and are
 * passed through as they are.
 */
export const strictJsonSchema = (schema: object): object => rewrite(schema) as object

const acceptsNull = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "Literal":
      return ast.literal === null
    case "UnknownKeyword":
    case "AnyKeyword":
      return true
    case "Union":
      return ast.types.some(acceptsNull)
    case "Refinement":
      return acceptsNull(ast.from)
    case "Transformation":
      return acceptsNull(ast.from)
    case "Suspend":
      return acceptsNull(ast.f())
    default:
      return false
  }
}

const normalize = (ast: SchemaAST.AST, value: unknown, depth: number): unknown => {
  // Recursive schemas over cyclic data cannot come from JSON; the bound only guards
  // against a pathological schema.
  if (depth > 256) return value
  switch (ast._tag) {
    case "Refinement":
    case "Transformation":
      return normalize(ast.from, value, depth + 1)
    case "Suspend":
      return normalize(ast.f(), value, depth + 1)
    case "TypeLiteral": {
      if (!isNode(value)) return value
      const out: Record<string, unknown> = { ...value }
      for (const signature of ast.propertySignatures) {
        const key = signature.name
        if (typeof key !== "string" || !Object.hasOwn(out, key)) continue
        if (out[key] === null && signature.isOptional && !acceptsNull(signature.type)) delete out[key]
        else out[key] = normalize(signature.type, out[key], depth + 1)
      }
      return out
    }
    case "TupleType": {
      if (!Array.isArray(value)) return value
      const rest = ast.rest
      return value.map((element, index) => {
        const type = ast.elements[index]?.type ?? rest[Math.min(index - ast.elements.length, rest.length - 1)]?.type
        return type === undefined ? element : normalize(type, element, depth + 1)
      })
    }
    case "Union": {
      if (!isNode(value) && !Array.isArray(value)) return value
      // The member the value is meant for is the first one it decodes against once
      // normalized; without one the value is left for the real schema to report on.
      for (const member of ast.types) {
        const candidate = normalize(member, value, depth + 1)
        const decoded = ParseResult.decodeUnknownEither(Schema.make(member) as Schema.Schema<unknown, unknown, never>)(
          candidate
        )
        if (Either.isRight(decoded)) return candidate
      }
      return value
    }
    default:
      return value
  }
}

/**
 * Removes the `null`s that the advertised schema allowed for optional fields whose real
 * schema does not accept `null`, in nested structs, arrays and unions too. Anything else
 * is returned unchanged, for the real schema to judge.
 */
export const nullsAsAbsent = (schema: Schema.Schema.AnyNoContext, value: unknown): unknown =>
  normalize(schema.ast, value, 0)

