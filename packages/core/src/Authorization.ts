/**
 * Who may run which tool. A tool declares the permission it needs with an annotation
 * (so it stays a plain `@effect/ai` tool); the caller supplies the {@link Principal} of
 * a run as a service. Every call of a batch is checked before any of them runs.
 *
 * @example
 * ```ts
 * import { Agent, Authorization } from "@agent-harness/core"
 * import { Tool } from "@effect/ai"
 * import { Effect, Schema } from "effect"
 *
 * const RecordInvoice = Tool.make("record_invoice", { parameters: { amount: Schema.Number } })
 *   .annotate(Authorization.RequiresPermission, "billing:write")
 *
 * const program = Agent.run({ prompt, toolkit, permissionPolicy: "feedback" }).pipe(
 *   Effect.provideService(Authorization.Principal, { userId: "u1", tenantId: "acme", permissions: ["billing:write"] })
 * )
 * ```
 */
import type { Tool } from "@effect/ai"
import { Context, Option } from "effect"

/** The identity a run acts for. */
export interface PrincipalInfo {
  readonly userId: string
  readonly tenantId?: string | undefined
  /** Permissions held, directly or through roles (the caller resolves roles). */
  readonly permissions: ReadonlyArray<string>
}

/** The principal of a run, supplied by the caller as a service. */
export class Principal extends Context.Tag("@agent-harness/core/Principal")<Principal, PrincipalInfo>() {}

/** Tool annotation: the permission a principal must hold for the tool to run. */
export class RequiresPermission extends Context.Tag("@agent-harness/core/RequiresPermission")<
  RequiresPermission,
  string
>() {}

/**
 * What happens to a batch with a denied call: `stop` ends the run with
 * `PermissionDenied` and runs none of the batch; `feedback` answers denied calls with
 * `permission_denied` results and runs the others.
 */
export type Policy = "stop" | "feedback"

/** Permission names: letters, digits and `_ . : * -`, 1 to 128 of them. */
const permissionName = /^[A-Za-z0-9_.:*-]{1,128}$/

/**
 * The permission a tool requires, if any; `Left` with a message when the annotation is
 * malformed (checked when a run starts, not in the middle of it).
 */
export const required = (tool: Tool.Any): { readonly permission?: string; readonly issue?: string } => {
  const value: Option.Option<unknown> = Context.getOption(tool.annotations, RequiresPermission)
  if (Option.isNone(value)) return {}
  const permission = value.value
  if (typeof permission !== "string" || !permissionName.test(permission)) {
    return { issue: `tool '${tool.name}' declares a malformed permission ${JSON.stringify(permission) ?? String(permission)}` }
  }
  return { permission }
}

/** Whether `principal` may run a tool that requires `permission`. Without a principal, never. */
export const allows = (principal: PrincipalInfo | undefined, permission: string | undefined): boolean =>
  permission === undefined || (principal !== undefined && principal.permissions.includes(permission))
