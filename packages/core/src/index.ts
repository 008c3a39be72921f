/**
 * `@agent-harness/core`: the agent loop and its policies.
 * The SQL idempotency stores are in `@agent-harness/core/sqlite`.
 */
export * as Agent from "./Agent.js"
export * as AgentError from "./AgentError.js"
export * as Authorization from "./Authorization.js"
export * as Budget from "./Budget.js"
export * as ContextWindow from "./ContextWindow.js"
export * as HarnessEvent from "./HarnessEvent.js"
export * as Idempotency from "./Idempotency.js"
export * as Retry from "./Retry.js"
export * as ToolError from "./ToolError.js"
export * as ToolOutput from "./ToolOutput.js"
export * as ToolResult from "./ToolResult.js"
export * as Transcript from "./Transcript.js"
export * as Usage from "./Usage.js"
