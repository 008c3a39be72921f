import { Agent } from "@agent-harness/core"
import { ScriptedModel, StrictSchema } from "@agent-harness/testing"
import { Tool, Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Either, FastCheck, Schema, SchemaAST } from "effect"
import { decoder } from "../src/internal/arguments.js"
import { nullsAsAbsent, strictJsonSchema } from "../src/internal/strict.js"

const Line = Schema.Struct({
  sku: Schema.NonEmptyString,
  qty: Schema.Int,
  note: Schema.optional(Schema.String),
  gift: Schema.optional(Schema.Struct({ to: Schema.String, message: Schema.optional(Schema.String) }))
})

const Invoice = Tool.make("invoice", {
  description: "Drafts an invoice",
  parameters: {
    customer: Schema.NonEmptyString,
    lines: Schema.Array(Line),
    currency: Schema.Literal("EUR", "USD"),
    dueInDays: Schema.optional(Schema.Int.pipe(Schema.between(1, 90))),
    reference: Schema.optional(Schema.NullOr(Schema.String)),
    tags: Schema.optional(Schema.Array(Schema.String)),
    payment: Schema.optional(
      Schema.Union(
        Schema.Struct({ kind: Schema.Literal("card"), last4: Schema.optional(Schema.String) }),
        Schema.Struct({ kind: Schema.Literal("transfer"), iban: Schema.String })
      )
    )
  },
  success: Schema.String
})

class Address extends Schema.Class<Address>("Address")({ city: Schema.String, zip: Schema.optional(Schema.String) }) {}

const Ship = Tool.make("ship", { parameters: { to: Address }, success: Schema.String })

const WithDefault = Schema.Struct({ priority: Schema.optionalWith(Schema.Literal("low", "high"), { default: () => "low" as const }) })

const advertised = (tool: Tool.Any) => strictJsonSchema(Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast))

const parameters = Invoice.parametersSchema as Schema.Schema<unknown, unknown, never>

describe("strict tool schemas", () => {
  it("Effect's own schema for optional fields breaks strict mode, so the validator can fail", () => {
    const raw = StrictSchema.violations(Tool.getJsonSchemaFromSchemaAst(Invoice.parametersSchema.ast))
    assert.isTrue(raw.some((v) => v.includes("required must list every property (missing: dueInDays, reference, tags, payment)")), raw.join("\n"))
    assert.isTrue(raw.some((v) => v.includes("keyword 'minLength' is not supported")), raw.join("\n"))
  })

  it("the advertised schema passes every strict rule, nested structs, arrays, literals and refinements included", () => {
    assert.deepStrictEqual(StrictSchema.violations(advertised(Invoice)), [])
  })

  it("optional fields become required and nullable; required ones stay as they were", () => {
    const schema = advertised(Invoice) as {
      required: ReadonlyArray<string>
      properties: Record<string, unknown>
    }
    assert.deepStrictEqual(schema.required, ["customer", "lines", "currency", "dueInDays", "reference", "tags", "payment"])
    assert.deepStrictEqual(schema.properties.currency, { type: "string", enum: ["EUR", "USD"] })
    assert.deepStrictEqual(schema.properties.tags, { anyOf: [{ type: "array", items: { type: "string" } }, { type: "null" }] })
    // Already nullable: no second null.
    assert.deepStrictEqual(schema.properties.reference, { anyOf: [{ type: "string" }, { type: "null" }] })
    // A refused keyword is kept for the model to read, in the description.
    const customer = schema.properties.customer as { description: string; minLength?: number }
    assert.isUndefined(customer.minLength)
    assert.include(customer.description, "minLength: 1")
  })

  it("the validator names the rules a schema breaks", () => {
    assert.deepStrictEqual(StrictSchema.violations({ type: "object", properties: { a: { type: "string" } }, required: [] }), [
      "$: additionalProperties must be false",
      "$: required must list every property (missing: a)"
    ])
    assert.deepStrictEqual(StrictSchema.violations({ anyOf: [{ type: "object" }] })[0], "$: the root must be an object schema, not anyOf")
    assert.include(
      StrictSchema.violations({ type: "object", properties: { a: {} }, required: ["a"], additionalProperties: false }).join(),
      "a schema must have a type"
    )
    assert.include(
      StrictSchema.violations({
        type: "object",
        properties: { a: { $ref: "#/$defs/Missing" } },
        required: ["a"],
        additionalProperties: false
      }).join(),
      "does not resolve"
    )
    let deep: object = { type: "string" }
    for (let i = 0; i < 11; i++) deep = { type: "object", properties: { x: deep }, required: ["x"], additionalProperties: false }
    assert.include(StrictSchema.violations(deep).join(), "nested more than 10 levels")
    const wide = Object.fromEntries(Array.from({ length: 5001 }, (_, i) => [`p${i}`, { type: "string" }]))
    assert.include(
      StrictSchema.violations({ type: "object", properties: wide, required: Object.keys(wide), additionalProperties: false }).join(),
      "5001 object properties"
    )
    assert.include(
      StrictSchema.violations({
        type: "object",
        properties: { a: { type: "string", enum: Array.from({ length: 1001 }, (_, i) => `v${i}`) } },
        required: ["a"],
        additionalProperties: false
      }).join(),
      "1001 enum values"
    )
  })

  it("a record cannot be made strict and is reported, not hidden", () => {
    const Tagged = Tool.make("tagged", { parameters: { labels: Schema.Record({ key: Schema.String, value: Schema.String }) } })
    assert.isAbove(StrictSchema.violations(advertised(Tagged)).length, 0)
  })
})

describe("nulls for optional fields", () => {
  it("a null for an optional field that does not accept null is read as absent, at any depth", () => {
    const value = nullsAsAbsent(parameters, {
      customer: "ACME",
      lines: [{ sku: "a", qty: 1, note: null, gift: { to: "Bo", message: null } }, { sku: "b", qty: 2, note: null, gift: null }],
      currency: "EUR",
      dueInDays: null,
      reference: null,
      tags: null,
      payment: { kind: "card", last4: null }
    })
    assert.deepStrictEqual(value, {
      customer: "ACME",
      lines: [{ sku: "a", qty: 1, gift: { to: "Bo" } }, { sku: "b", qty: 2 }],
      currency: "EUR",
      // The real schema accepts null here, so null stays null.
      reference: null,
      payment: { kind: "card" }
    })
  })

  it("a null for a field with a default is read as absent, so the default applies; classes are walked too", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(StrictSchema.violations(advertised(Ship)), [])
      const decoded = yield* decoder(Ship)({ to: { city: "Oslo", zip: null } })
      assert.deepStrictEqual(decoded, { to: new Address({ city: "Oslo" }) })
      const schema = WithDefault as Schema.Schema<unknown, unknown, never>
      assert.deepStrictEqual(Schema.decodeUnknownSync(schema)(nullsAsAbsent(schema, { priority: null })), { priority: "low" })
      assert.deepStrictEqual(
        StrictSchema.violations(strictJsonSchema(Tool.getJsonSchemaFromSchemaAst(WithDefault.ast))),
        []
      )
    }))

  it("a null for a required field stays, and the real schema reports it with its path", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        decoder(Invoice)({ customer: null, lines: [{ sku: "a", qty: null }], currency: "EUR" })
      )
      assert.strictEqual(error.reason, "schema")
      assert.deepStrictEqual(error.details.map((d) => d.path), ["$.customer", "$.lines[0].qty"])
    }))

  it("property: sending every absent optional field as null decodes like leaving it out", () => {
    // What a model can send is JSON: a field set to undefined is a field left out.
    const arbitrary = Arbitrary.make(parameters).map((value) => JSON.parse(JSON.stringify(Schema.encodeSync(parameters)(value))) as unknown)
    const decode = (raw: unknown) => Effect.runSync(Effect.either(decoder(Invoice)(raw)))
    FastCheck.assert(
      FastCheck.property(arbitrary, (encoded) => {
        const withNulls = nullFill(parameters.ast, encoded)
        const expected = decode(encoded)
        const actual = decode(withNulls)
        assert.isTrue(Either.isRight(expected))
        assert.deepStrictEqual(actual, expected)
        // The same value also reaches the harness as JSON text.
        assert.deepStrictEqual(decode(JSON.stringify(withNulls)), expected)
      }),
      { numRuns: 300 }
    )
  })

  it("a model that sends null for an optional field runs the tool with the field absent", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const Tools = Toolkit.make(Invoice)
      const result = yield* Agent.run({ prompt: "bill ACME", toolkit: Tools }).pipe(
        Effect.provide(Tools.toLayer({
          invoice: (params) => {
            seen.push(params)
            return Effect.succeed("INV-1")
          }
        })),
        Effect.provide(ScriptedModel.layer([
          ScriptedModel.calls(ScriptedModel.call("invoice", {
            customer: "ACME",
            lines: [{ sku: "a", qty: 1, note: null, gift: null }],
            currency: "USD",
            dueInDays: null,
            reference: null,
            tags: null,
            payment: null
          })),
          ScriptedModel.text("done")
        ]))
      )
      assert.strictEqual(result.answer, "done")
      assert.deepStrictEqual(seen, [{ customer: "ACME", lines: [{ sku: "a", qty: 1 }], currency: "USD", reference: null }])
    }))

  it("the schemas a run advertises pass the strict rules", () =>
    Effect.gen(function*() {
      const Tools = Toolkit.make(Invoice)
      yield* Agent.run({ prompt: "hi", toolkit: Tools }).pipe(Effect.provide(Tools.toLayer({ invoice: () => Effect.succeed("x") })))
      const requests = yield* (yield* ScriptedModel.ScriptedModel).requests
      const tool = requests[0]?.tools[0]
      assert.strictEqual(tool?.name, "invoice")
      assert.deepStrictEqual(StrictSchema.violations(tool?.parameters), [])
    }).pipe(Effect.provide(ScriptedModel.layer([ScriptedModel.text("nothing to do")]))))
})

/**
 * Sets every absent optional field (at any depth) whose schema does not accept null to
 * null: what a model bound by the advertised strict schema sends.
 */
const nullFill = (ast: SchemaAST.AST, value: unknown): unknown => {
  switch (ast._tag) {
    case "Refinement":
    case "Transformation":
      return nullFill(ast.from, value)
    case "Suspend":
      return nullFill(ast.f(), value)
    case "TypeLiteral": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return value
      const record = value as Record<string, unknown>
      const out: Record<string, unknown> = { ...record }
      for (const signature of ast.propertySignatures) {
        const key = String(signature.name)
        if (Object.hasOwn(record, key)) out[key] = nullFill(signature.type, record[key])
        // A field that accepts null keeps null's own meaning; only the others are filled.
        else if (signature.isOptional && !Schema.is(Schema.make(signature.type) as Schema.Schema<unknown>)(null)) out[key] = null
      }
      return out
    }
    case "TupleType":
      return Array.isArray(value)
        ? value.map((element, index) => {
          const type = ast.elements[index]?.type ?? ast.rest[0]?.type
          return type === undefined ? element : nullFill(type, element)
        })
        : value
    case "Union": {
      // The member whose literal fields match; good enough for the tagged unions used here.
      for (const member of ast.types) {
        if (Schema.is(Schema.make(member) as Schema.Schema<unknown>)(value)) return nullFill(member, value)
      }
      return value
    }
    default:
      return value
  }
}
