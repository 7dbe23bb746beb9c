import { Schema } from "effect"

/**
 * The one rule for a new account's email and password, shared by signup, adding a member, the
 * `talkgraph user create` command and the configured first admin. Logging in checks neither:
 * accounts created under an older rule still sign in.
 */

const MAX_EMAIL = 254
const MAX_LOCAL_PART = 64
const LOCAL_PART = /^[^\s@"(),:;<>[\\\]\p{C}]+$/u
const DOMAIN_LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u

/** Why `email` is not an address we accept, or undefined when it is. */
export const emailProblem = (email: string): string | undefined => {
  const invalid = "Not a valid email address"
  if (email.length > MAX_EMAIL) return `An email address has at most ${MAX_EMAIL} characters`
  const at = email.lastIndexOf("@")
  if (at <= 0) return invalid
  const local = email.slice(0, at)
  const domain = email.slice(at + 1)
  if (local.length > MAX_LOCAL_PART || !LOCAL_PART.test(local)) return invalid
  if (local.startsWith(".") || local.endsWith(".") || local.includes("..")) return invalid
  const labels = domain.split(".")
  return labels.every((label) => DOMAIN_LABEL.test(label)) ? undefined : invalid
}

export const MIN_PASSWORD = 8
export const MAX_PASSWORD = 1024

/**
 * Passwords that a guesser tries first, from the most common leaked passwords of eight
 * characters or more: the throttle allows five guesses in fifteen minutes, and these come first.
 */
const COMMON_PASSWORDS = new Set([
  "password",
  "password1",
  "password12",
  "password123",
  "passw0rd",
  "p@ssw0rd",
  "12345678",
  "123456789",
  "1234567890",
  "0123456789",
  "87654321",
  "987654321",
  "12341234",
  "12121212",
  "123123123",
  "11223344",
  "qwertyui",
  "qwertyuiop",
  "qwerty123",
  "qwerty12",
  "1q2w3e4r",
  "1q2w3e4r5t",
  "1qaz2wsx",
  "zaq12wsx",
  "asdfghjk",
  "asdfghjkl",
  "zxcvbnm1",
  "abcdefgh",
  "abc12345",
  "abcd1234",
  "iloveyou",
  "sunshine",
  "princess",
  "football",
  "baseball",
  "superman",
  "starwars",
  "whatever",
  "trustno1",
  "welcome1",
  "letmein1",
  "changeme",
  "admin123",
  "administrator",
  "computer",
  "internet",
  "michelle",
  "jennifer",
  "master123",
  "dragon123",
  "monkey123",
  "shadow123",
  "talkgraph"
])

/**
 * What is wrong with `password` as a new password, as a predicate ("must be at least 8
 * characters") for the caller to put after its own subject; undefined when nothing is.
 * Lengths count characters, not bytes.
 */
export const passwordProblem = (password: string): string | undefined => {
  const characters = [...password]
  if (characters.length < MIN_PASSWORD) return `must be at least ${MIN_PASSWORD} characters`
  if (characters.length > MAX_PASSWORD) return `must be at most ${MAX_PASSWORD} characters`
  if (password.trim() === "") return "must not be only spaces"
  if (characters.every((character) => character === characters[0])) return "must not be one character repeated"
  if (COMMON_PASSWORDS.has(password.toLowerCase())) return "is one of the most commonly used passwords; choose another"
  return undefined
}

/** The email of a new account, as request bodies take it. */
export const NewEmail = Schema.String.pipe(
  Schema.maxLength(MAX_EMAIL, { message: () => `An email address has at most ${MAX_EMAIL} characters` }),
  Schema.filter(emailProblem),
  Schema.annotations({ description: "An email address (not yet used by another account)" })
)

/** The password of a new account, as request bodies take it. */
export const NewPassword = Schema.String.pipe(
  Schema.maxLength(MAX_PASSWORD * 2, { message: () => `Password must be at most ${MAX_PASSWORD} characters` }),
  Schema.filter((password) => {
    const problem = passwordProblem(password)
    return problem && `Password ${problem}`
  }),
  Schema.annotations({
    description:
      `${MIN_PASSWORD} to ${MAX_PASSWORD} characters, not one character repeated nor a commonly used password`
  })
)
