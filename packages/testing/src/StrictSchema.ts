/**
 * Checks a function tool's `parameters` against the rules OpenAI applies to strict tool
 * schemas (Structured Outputs, "Supported schemas":
 * https://platform.openai.com/docs/guides/structured-outputs#supported-schemas), so that a
 * test fails here instead of with a 400 from the real API.
 *
 * Enforced:
 * - the root is an object schema (not `anyOf`);
 * - every object has `properties`, `additionalProperties: false`, and `required` naming
 *   every property (an optional field is written as a union with `null`);
 * - every schema says what it is (`type`, `anyOf`, `enum`, `const` or `$ref`); `type` is
 *   one of string, number, integer, boolean, object, array, null;
 * - only supported keywords: structure (`type`, `properties`, `required`,
 *   `additionalProperties`, `items`, `anyOf`, `enum`, `const`, `$ref`, `$defs`), annotations
 *   (`title`, `description`), and the supported constraints: strings `pattern`, `format`
 *   (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid), numbers
 *   `multipleOf`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, arrays
 *   `minItems`, `maxItems` (so `minLength`, `maxLength`, `default`, `allOf`, `not`,
 *   `patternProperties`, `propertyNames`, `minProperties`, `uniqueItems`, ... are refused);
 * - `$ref` points at `#` or an existing `#/$defs/...` entry;
 * - limits: at most 5000 object properties in all, 10 levels of object nesting, 1000 enum
 *   values in all, 120000 characters of property names, definition names, enum and const
 *   values, and 15000 characters for one string enum of more than 250 values.
 *
 * @example
 * ```ts
 * import { StrictSchema } from "@agent-harness/testing"
 *
 * StrictSchema.violations({ type: "object", properties: { a: { type: "string" } }, required: [] })
 * // ["$: additionalProperties must be false", "$: required must list every property (missing: a)"]
 * ```
 */

type Node = { readonly [key: string]: unknown }

const isNode = (u: unknown): u is Node => typeof u === "object" && u !== null && !Array.isArray(u)

const types = new Set(["string", "number", "integer", "boolean", "object", "array", "null"])

const formats = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"])

const structural = ["type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const", "$ref", "$defs", "title", "description"]

const allowed: Record<string, ReadonlySet<string>> = {
  string: new Set(["pattern", "format"]),
  number: new Set(["multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
  integer: new Set(["multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
  array: new Set(["minItems", "maxItems"])
}

/** The limits checked, as documented. */
export const limits = {
  properties: 5000,
  nesting: 10,
  enumValues: 1000,
  stringLength: 120_000,
  largeEnum: 250,
  largeEnumLength: 15_000
} as const

interface Totals {
  properties: number
  enumValues: number
  stringLength: number
}

const typesOf = (node: Node): ReadonlyArray<unknown> =>
  Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type]

const check = (
  node: unknown,
  path: string,
  depth: number,
  root: Node,
  totals: Totals,
  out: Array<string>
): void => {
  if (!isNode(node)) {
    out.push(`${path}: a schema must be an object, got ${JSON.stringify(node)}`)
    return
  }
  const nodeTypes = typesOf(node)
  for (const type of nodeTypes) {
    if (typeof type !== "string" || !types.has(type)) out.push(`${path}: unsupported type ${JSON.stringify(type)}`)
  }
  if (nodeTypes.length === 0 && !["anyOf", "enum", "const", "$ref"].some((key) => key in node)) {
    out.push(`${path}: a schema must have a type, anyOf, enum, const or $ref`)
  }
  const permitted = new Set(structural)
  for (const type of nodeTypes) for (const key of allowed[String(type)] ?? []) permitted.add(key)
  for (const key of Object.keys(node)) {
    if (!permitted.has(key)) out.push(`${path}: keyword '${key}' is not supported`)
  }
  if (typeof node.format === "string" && !formats.has(node.format)) out.push(`${path}: format '${node.format}' is not supported`)
  if (Array.isArray(node.enum)) {
    totals.enumValues += node.enum.length
    let length = 0
    for (const value of node.enum) if (typeof value === "string") length += value.length
    totals.stringLength += length
    if (node.enum.length > limits.largeEnum && length > limits.largeEnumLength) {
      out.push(`${path}: an enum of more than ${limits.largeEnum} values may hold at most ${limits.largeEnumLength} characters`)
    }
  }
  if (typeof node.const === "string") totals.stringLength += node.const.length
  if (typeof node.$ref === "string") {
    const ref = node.$ref
    const target = ref === "#" ? root : ref.startsWith("#/$defs/") && isNode(root.$defs) ? root.$defs[ref.slice(8)] : undefined
    if (target === undefined) out.push(`${path}: $ref '${ref}' does not resolve`)
  }
  if (Array.isArray(node.anyOf)) {
    node.anyOf.forEach((branch, index) => check(branch, `${path}.anyOf[${index}]`, depth, root, totals, out))
  } else if ("anyOf" in node) out.push(`${path}: anyOf must be an array`)
  const isObject = nodeTypes.includes("object")
  if (isObject) {
    if (depth + 1 > limits.nesting) out.push(`${path}: objects are nested more than ${limits.nesting} levels deep`)
    if (node.additionalProperties !== false) out.push(`${path}: additionalProperties must be false`)
    if (!isNode(node.properties)) {
      out.push(`${path}: an object needs properties`)
    } else {
      const keys = Object.keys(node.properties)
      totals.properties += keys.length
      for (const key of keys) totals.stringLength += key.length
      const required = Array.isArray(node.required) ? node.required : []
      const missing = keys.filter((key) => !required.includes(key))
      if (!Array.isArray(node.required)) out.push(`${path}: required must be an array`)
      if (missing.length > 0) out.push(`${path}: required must list every property (missing: ${missing.join(", ")})`)
      const unknown = required.filter((key) => typeof key !== "string" || !keys.includes(key))
      if (unknown.length > 0) out.push(`${path}: required names unknown properties (${unknown.join(", ")})`)
      for (const [key, value] of Object.entries(node.properties)) {
        check(value, `${path}.properties.${key}`, depth + 1, root, totals, out)
      }
    }
  } else if ("properties" in node || "additionalProperties" in node || "required" in node) {
    out.push(`${path}: properties, required and additionalProperties belong to object schemas`)
  }
  if (nodeTypes.includes("array")) {
    if (isNode(node.items)) check(node.items, `${path}.items`, depth, root, totals, out)
    else out.push(`${path}: an array needs one items schema`)
  } else if ("items" in node) {
    out.push(`${path}: items belongs to array schemas`)
  }
  if ("$defs" in node) {
    if (node !== root) out.push(`${path}: $defs belongs at the root`)
    if (isNode(node.$defs)) {
      for (const [name, definition] of Object.entries(node.$defs)) {
        totals.stringLength += name.length
        check(definition, `${path}.$defs.${name}`, depth, root, totals, out)
      }
    }
  }
}

/** Every rule the schema breaks, with a path into it; empty when strict mode accepts it. */
export const violations = (parameters: unknown): ReadonlyArray<string> => {
  const out: Array<string> = []
  if (!isNode(parameters)) return ["$: the parameters schema must be an object"]
  if (!typesOf(parameters).includes("object") || "anyOf" in parameters) out.push("$: the root must be an object schema, not anyOf")
  const totals: Totals = { properties: 0, enumValues: 0, stringLength: 0 }
  check(parameters, "$", 0, parameters, totals, out)
  if (totals.properties > limits.properties) out.push(`$: ${totals.properties} object properties, at most ${limits.properties}`)
  if (totals.enumValues > limits.enumValues) out.push(`$: ${totals.enumValues} enum values, at most ${limits.enumValues}`)
  if (totals.stringLength > limits.stringLength) {
    out.push(`$: ${totals.stringLength} characters of names and values, at most ${limits.stringLength}`)
  }
  return out
}
