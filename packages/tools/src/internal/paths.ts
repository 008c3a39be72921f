/**
 * The syntax checks on a path the model sends, before anything touches the disk.
 * Pure: the same string always gets the same answer.
 */
import { Either } from "effect"

/** Why a path string was refused; the codes match `Workspace.ErrorCode`. */
export interface Refusal {
  readonly code: "EMPTY_PATH" | "NUL_BYTE" | "PATH_TOO_LONG" | "ABSOLUTE_PATH" | "PATH_ESCAPES_ROOT"
  readonly message: string
}

/** Limits on the length of a path, in UTF-8 bytes. */
export interface Limits {
  readonly maxPathBytes: number
  readonly maxComponentBytes: number
}

const byteLength = (s: string) => Buffer.byteLength(s, "utf8")

// Spellings of "." and "/" that some layer (a URL decoder, a Unicode normaliser, a
// Windows API) could turn into the real thing. Linux itself never decodes them, so a
// file really named "%2e%2e" would be harmless; it is refused anyway because a name
// that only makes sense as an escape attempt is not worth the doubt.
const encodedDot = /%2e|%c0%ae|%e0%80%ae|%u002e/gi
const encodedSlash = /%2f|%5c|%c0%af|%e0%80%af|%u002f|%u005c/gi

const decodeSpellings = (segment: string): string => {
  let current = segment
  // Double encoding (%252e) unwraps one layer per round; three rounds is plenty, and any
  // "%25" left over still cannot become a dot without a further decoder we do not have.
  for (let round = 0; round < 3; round++) {
    const next = current.replace(/%25/gi, "%").replace(encodedDot, ".").replace(encodedSlash, "/")
    if (next === current) break
    current = next
  }
  return current.normalize("NFKC").replace(/\\/g, "/")
}

const escapes = (segment: string): boolean =>
  decodeSpellings(segment).split("/").some((part) => part.trim() === "..")

/**
 * The components of a relative path, with `.` and empty components dropped; an empty
 * array means the root itself.
 */
export const parse = (input: string, limits: Limits): Either.Either<ReadonlyArray<string>, Refusal> => {
  if (input.length === 0) return Either.left({ code: "EMPTY_PATH", message: "the path is empty" })
  if (input.includes("\u0000")) {
    return Either.left({ code: "NUL_BYTE", message: "the path contains a NUL byte" })
  }
  if (byteLength(input) > limits.maxPathBytes) {
    return Either.left({
      code: "PATH_TOO_LONG",
      message: `the path is longer than ${limits.maxPathBytes} bytes`
    })
  }
  if (input.startsWith("/") || input.startsWith("\\") || /^[A-Za-z]:[\\/]/.test(input)) {
    return Either.left({
      code: "ABSOLUTE_PATH",
      message: "absolute paths are refused; give a path relative to the workspace root"
    })
  }
  if (input.trim() === "~" || input.startsWith("~/")) {
    return Either.left({
      code: "ABSOLUTE_PATH",
      message: "'~' is not expanded; give a path relative to the workspace root"
    })
  }
  const components: Array<string> = []
  for (const segment of input.split("/")) {
    if (segment === "" || segment === ".") continue
    if (escapes(segment)) {
      return Either.left({
        code: "PATH_ESCAPES_ROOT",
        message: "'..' (in any spelling) is refused; give a path that stays inside the workspace root"
      })
    }
    if (byteLength(segment) > limits.maxComponentBytes) {
      return Either.left({
        code: "PATH_TOO_LONG",
        message: `a path component is longer than ${limits.maxComponentBytes} bytes`
      })
    }
    components.push(segment)
  }
  return Either.right(components)
}

/** The path as the model should read it in messages: components joined with `/`. */
export const display = (components: ReadonlyArray<string>): string =>
  components.length === 0 ? "." : components.join("/")
