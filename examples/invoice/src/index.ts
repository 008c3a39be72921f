/** The accounting example. */
export * as Invoice from "./Invoice.js"
export * as InvoiceScript from "./Script.js"
