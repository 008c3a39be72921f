/**
 * `@agent-harness/testing`: scripted models and helpers for testing agents.
 */
export * as ScriptedModel from "./ScriptedModel.js"
export * as Scenario from "./Scenario.js"
export * as StrictSchema from "./StrictSchema.js"
