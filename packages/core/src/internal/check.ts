/** The transcript invariant of `Transcript.check`, checked one message at a time. */
import type { Prompt } from "@effect/ai"

type Transcript = ReadonlyArray<Prompt.Message>

/** Where and why a transcript breaks the invariant. */
export type Problem = { readonly reason: string; readonly index: number; readonly callId?: string }

/**
 * The invariant checked one message at a time, so that a run re-checks only what was
 * appended since its last request (see `check`).
 */
export class Checker {
  private readonly seen = new Set<string>()
  private readonly pending = new Map<string, string>()
  /** Messages checked so far. */
  checked = 0

  /** Checks `messages` from `from` on, continuing from what was checked before. */
  feed(messages: Transcript, from: number): Problem | undefined {
    const { pending, seen } = this
    const fail = (index: number, reason: string, callId?: string): Problem =>
      callId === undefined ? { reason, index } : { reason, index, callId }
    for (let index = from; index < messages.length; index++) {
      const message = messages[index]!
      this.checked = index + 1
      if (message.role !== "tool" && pending.size > 0) {
        const [callId, name] = pending.entries().next().value!
        return fail(index, `tool call '${callId}' (${name}) has no result before the next ${message.role} message`, callId)
      }
      if (message.role === "assistant") {
        for (const part of message.content) {
          if (part.type !== "tool-call") continue
          if (part.id.length === 0) return fail(index, "a tool call has an empty id", part.id)
          if (seen.has(part.id)) return fail(index, `tool call id '${part.id}' is used twice`, part.id)
          seen.add(part.id)
          if (!part.providerExecuted) pending.set(part.id, part.name)
        }
      } else if (message.role === "tool") {
        for (const part of message.content) {
          if (!pending.has(part.id)) {
            const reason = seen.has(part.id)
              ? `tool call '${part.id}' has more than one result, or its result is not right after its turn`
              : `tool result '${part.id}' answers no tool call`
            return fail(index, reason, part.id)
          }
          pending.delete(part.id)
        }
      }
    }
    return undefined
  }

  /** Every call so far must have its result by the end (`length` messages). */
  finish(length: number): Problem | undefined {
    if (this.pending.size === 0) return undefined
    const [callId, name] = this.pending.entries().next().value!
    return { reason: `tool call '${callId}' (${name}) has no result`, index: length, callId }
  }
}

