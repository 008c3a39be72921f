// The first TypeScript example of README.md, kept here so that it is type-checked (.ci/run compares them).
import { Agent } from "@agent-harness/core"
import { ScriptedModel } from "@agent-harness/testing"
import { Tool, Toolkit } from "@effect/ai"
import { Console, Effect, Schema } from "effect"

const Add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: { a: Schema.Number, b: Schema.Number },
  success: Schema.Number
})
const Calc = Toolkit.make(Add)
const CalcLive = Calc.toLayer({ add: ({ a, b }) => Effect.succeed(a + b) })

const program = Agent.run({ prompt: "What is 2 + 3?", toolkit: Calc, budget: { maxSteps: 4, timeout: "30 seconds" } }).pipe(
  Effect.tap((result) => Console.log(result.answer, result.usage)),
  Effect.catchTag("BudgetExceeded", (e) => Console.log(`stopped by ${e.budget} after ${e.snapshot.steps} steps`)),
  Effect.provide(CalcLive),
  // a real provider layer (e.g. from @effect/ai-openai) goes here instead
  Effect.provide(ScriptedModel.layer([ScriptedModel.calls(ScriptedModel.call("add", { a: 2, b: 3 })), ScriptedModel.text("5")]))
)
Effect.runPromise(program)
