/** The tools, world and principals the dispatch tests share. */
import { Agent, Authorization, Budget, Idempotency, ToolError } from "@agent-harness/core"
import { ScriptedModel } from "@agent-harness/testing"
import { Tool, Toolkit } from "@effect/ai"
import { Effect, Ref, Schema } from "effect"

export const S = ScriptedModel

export class DbDown extends Schema.TaggedError<DbDown>()("DbDown", { message: Schema.String }) {}

const Quote = Tool.make("quote", {
  parameters: { country: Schema.String },
  success: Schema.Number,
  failure: Schema.Union(ToolError.BusinessError, Schema.suspend(() => DbDown))
})
const Book = Tool.make("book", {
  parameters: { amount: Schema.Number },
  success: Schema.String,
  dependencies: [Idempotency.Key]
}).annotate(Idempotency.Mutating, true).annotate(Authorization.RequiresPermission, "billing:write")
const Wait = Tool.make("wait", { parameters: { ms: Schema.Number }, success: Schema.Number })
  .annotate(Budget.CallTimeout, "1 second")
export const Kit = Toolkit.make(Quote, Book, Wait)

export interface World {
  readonly booked: Ref.Ref<ReadonlyArray<string>>
  readonly bookDelay: number
}

export const handlers = (world: World) =>
  Kit.toLayer({
    quote: ({ country }) =>
      country === "UK"
        ? Effect.succeed(20)
        : country === "FR"
        ? Effect.fail(new DbDown({ message: "connection refused at 10.0.0.3:5432 (/srv/db.ts)" }))
        : Effect.fail(new ToolError.BusinessError({ code: "UNSUPPORTED_JURISDICTION", message: `no tax rules for ${country}` })),
    book: ({ amount }) =>
      Effect.gen(function*() {
        const key = yield* Idempotency.Key
        if (world.bookDelay > 0) yield* Effect.sleep(world.bookDelay)
        yield* Ref.update(world.booked, (all) => [...all, key])
        return `booked ${amount}`
      }),
    wait: ({ ms }) => Effect.as(Effect.sleep(ms), ms)
  })

export const makeWorld = (bookDelay = 0) => Effect.map(Ref.make<ReadonlyArray<string>>([]), (booked): World => ({ booked, bookDelay }))

export const billing: Authorization.PrincipalInfo = { userId: "ana", tenantId: "acme", permissions: ["billing:write"] }
export const viewer: Authorization.PrincipalInfo = { userId: "bo", tenantId: "acme", permissions: [] }

export const run = (options: Partial<Agent.Options<Toolkit.Tools<typeof Kit>>> = {}) =>
  Agent.run({ prompt: "go", toolkit: Kit, runId: "run_1", ...options })


export const bookTwice = [S.calls(S.call("book", { amount: 10 }, { id: "same" })), S.text("done")]
