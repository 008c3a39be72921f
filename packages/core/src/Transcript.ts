/**
 * The conversation a run keeps, as `@effect/ai` prompt messages, and the invariant
 * every provider relies on:
 *
 * - every tool call of an assistant turn has exactly one result;
 * - the results follow their turn (tool messages right after it, before anything else);
 * - call ids are unique in the whole transcript;
 * - no result without its call.
 *
 * Calls the provider executed itself (`providerExecuted`) carry their results inside
 * the assistant turn and are only checked for unique ids.
 *
 * @example
 * ```ts
 * import { Transcript } from "@agent-harness/core"
 * import { Either } from "effect"
 *
 * const checked = Transcript.check(messages)
 * if (Either.isLeft(checked)) console.error(checked.left.message)
 * ```
 */
import { Prompt } from "@effect/ai"
import { Either, Schema } from "effect"
import { Checker } from "./internal/check.js"

/** A transcript: the messages of a conversation, oldest first. */
export type Transcript = ReadonlyArray<Prompt.Message>

/** Schema of a transcript; `Transcript.Json` encodes it to and from a JSON string. */
export const Transcript: Schema.Schema<Transcript, ReadonlyArray<Prompt.MessageEncoded>> = Schema.Array(Prompt.Message)

/** A transcript as a JSON string, for storing a run and resuming it. */
export const Json = Schema.parseJson(Transcript)

/** The transcript breaks the invariant; `callId` names the call at fault when there is one. */
export class TranscriptInvalid extends Schema.TaggedError<TranscriptInvalid>(
  "@agent-harness/core/TranscriptInvalid"
)("TranscriptInvalid", {
  reason: Schema.String,
  callId: Schema.optional(Schema.String),
  index: Schema.Number
}) {
  override get message() {
    return `invalid transcript at message ${this.index}: ${this.reason}`
  }
}

/** Checks the invariant in one pass over the messages. */
export const check = (transcript: Transcript): Either.Either<void, TranscriptInvalid> => {
  const checker = new Checker()
  const problem = checker.feed(transcript, 0) ?? checker.finish(transcript.length)
  if (problem === undefined) return Either.void
  return Either.left(new TranscriptInvalid(problem))
}


/**
 * Checks a transcript that may end with an assistant turn still waiting for its tool
 * results (a run checkpointed just before its calls ran, then stopped): everything before
 * that turn must satisfy the invariant. Returns the waiting calls (none for a complete
 * transcript).
 */
export const checkResumable = (
  transcript: Transcript
): Either.Either<ReadonlyArray<Prompt.ToolCallPart>, TranscriptInvalid> => {
  const last = transcript[transcript.length - 1]
  const waiting = last?.role === "assistant"
    ? last.content.filter((part): part is Prompt.ToolCallPart => part.type === "tool-call" && !part.providerExecuted)
    : []
  if (waiting.length === 0) return Either.map(check(transcript), () => [])
  return Either.map(check([...transcript, ...answered(waiting)]), () => waiting)
}

/** Placeholder results, used only to check the calls waiting at the end of a transcript. */
const answered = (calls: ReadonlyArray<Prompt.ToolCallPart>): Array<Prompt.Message> => [
  Prompt.makeMessage("tool", {
    content: calls.map((call) =>
      Prompt.makePart("tool-result", { id: call.id, name: call.name, isFailure: false, result: null, providerExecuted: false })
    )
  })
]

/** All call ids in a transcript (for checking that new ids do not collide). */
export const callIds = (transcript: Transcript): Set<string> => {
  const ids = new Set<string>()
  for (const message of transcript) {
    if (message.role !== "assistant") continue
    for (const part of message.content) if (part.type === "tool-call") ids.add(part.id)
  }
  return ids
}
