/**
 * `@agent-harness/cli`: the `agent-harness` command line, and the pieces it is made of
 * for programs that want them: the offline model, the provider layers, the renderer.
 */
export * as Cli from "./Cli.js"
export * as CodingDemo from "./CodingDemo.js"
export * as InvoiceDemo from "./InvoiceDemo.js"
export * as OfflineModel from "./OfflineModel.js"
export * as Provider from "./Provider.js"
export * as Render from "./Render.js"
