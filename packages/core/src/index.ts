/**
 * `@agent-harness/core`: the agent loop and its policies.
 */
export * as Agent from "./Agent.js"
export * as AgentError from "./AgentError.js"
export * as Budget from "./Budget.js"
export * as ContextWindow from "./ContextWindow.js"
export * as ToolError from "./ToolError.js"
export * as ToolOutput from "./ToolOutput.js"
export * as ToolResult from "./ToolResult.js"
export * as Transcript from "./Transcript.js"
export * as Usage from "./Usage.js"
