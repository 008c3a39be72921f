/**
 * The seeded fault suite: whole scenarios where the harness's boundaries meet. Every
 * run is checked against all the harness's promises (see `Scenario.check`). It is split
 * into parts (one test file each) so that vitest spreads it over the cores.
 *
 * `FAULT_RUNS` sets the number of scenarios of a part (default 5,000: 10,000 in CI);
 * `npm run soak` runs 100,000. A failure prints the command that replays it.
 */
import { Scenario } from "@agent-harness/testing"
import { describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, TestContext } from "effect"

// TestClock spends real time (timer turns) on every sleep it advances, so scenarios run
// in concurrent batches, each with its own TestClock. fast-check shrinks a failing batch
// element by element, and the error names the scenario that broke a promise.
const batch = Number(process.env.FAULT_BATCH ?? 50)

export const defineFaultSuite = (part: number) => {
  const runs = Number(process.env.FAULT_RUNS ?? 5_000)
  const seed = process.env.FAULT_SEED === undefined ? (Date.now() + part * 7919) % 2 ** 31 : Number(process.env.FAULT_SEED)
  const file = `packages/core/test/Faults.${part}.test.ts`
  describe(`fault suite, part ${part}`, () => {
    it(`${runs} seeded scenarios keep every promise (seed ${seed})`, async () => {
      console.log(`fault suite part ${part}: ${runs} scenarios, seed ${seed}; replay: FAULT_SEED=${seed} FAULT_RUNS=${runs} npx vitest run ${file}`)
      await fc.assert(
        fc.asyncProperty(fc.array(Scenario.arbitrary, { minLength: batch, maxLength: batch }), (scenarios) =>
          Effect.runPromise(
            Effect.forEach(
              scenarios,
              (scenario) =>
                Effect.map(Scenario.run(scenario), (outcome) => {
                  const problems = Scenario.check(outcome)
                  if (problems.length > 0) {
                    throw new Error(`${problems.join("\n")}\noutcome: ${outcome.outcome}\nscenario: ${JSON.stringify(scenario)}`)
                  }
                }).pipe(Effect.provide(TestContext.TestContext)),
              { concurrency: "unbounded", discard: true }
            )
          )),
        { numRuns: Math.ceil(runs / batch), seed, endOnFailure: true }
      )
    }, 60 * 60 * 1000)
  })
}
