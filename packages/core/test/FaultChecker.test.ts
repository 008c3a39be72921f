/** The fault suite's checker must see a broken run; the suite itself is in Faults.1/2. */
import { Scenario } from "@agent-harness/testing"
import { assert, describe, it } from "@effect/vitest"


describe("fault suite checker", () => {
  it("the checker is not blind: a broken outcome is reported", () => {
    const broken: Scenario.Outcome = {
      scenario: { turns: [], budget: { maxSteps: 1, maxToolCalls: 0, timeout: 1 }, concurrency: 1, principal: "viewer", policy: "stop", interruptAt: undefined, observerFaultEvery: 0, retry: false },
      outcome: "defect: boom",
      transcript: [],
      steps: 2,
      toolCalls: 0,
      requests: 2,
      events: [],
      started: [{ tool: "pay", key: "k" }, { tool: "pay", key: "k" }],
      liveFibers: 1,
      leases: { acquired: 1, released: 0 }
    }
    const problems = Scenario.check(broken).join("\n")
    for (const expected of ["untyped outcome", "handlers ran, maxToolCalls", "model calls, maxSteps", "a denied call ran", "ran twice for one key", "fibers of the run", "scopes opened", "first event is not RunStarted", "model requests, 0 model calls and 0 retries"]) {
      assert.include(problems, expected)
    }
  })
})



