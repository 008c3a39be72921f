/**
 * `@agent-harness/tools`: tools that touch the machine without owning it. A confined
 * {@link Workspace} with file tools on it ({@link FileTools}), and commands the model
 * runs by preset name only ({@link CommandTool}). Not an OS sandbox: see the README.
 */
export * as CommandTool from "./CommandTool.js"
export * as FileTools from "./FileTools.js"
export * as Workspace from "./Workspace.js"
export * as WorkspaceError from "./WorkspaceError.js"
