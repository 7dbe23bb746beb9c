import * as crypto from "node:crypto"

/** Session tokens and API keys are 256-bit random strings with a recognizable prefix. */
export const SESSION_PREFIX = "tgs_"
export const API_KEY_PREFIX = "tgk_"

const randomPart = () => crypto.randomBytes(32).toString("base64url")

export const newSessionToken = () => `${SESSION_PREFIX}${randomPart()}`
export const newApiKey = () => `${API_KEY_PREFIX}${randomPart()}`

/** The part of a key shown in listings so a user can tell keys apart; too short to guess the rest. */
export const apiKeyDisplayPrefix = (key: string) => key.slice(0, API_KEY_PREFIX.length + 8)

export const isApiKey = (value: string) => value.startsWith(API_KEY_PREFIX)
export const isSessionToken = (value: string) => value.startsWith(SESSION_PREFIX)

/** The running server's operator token: lets `talkgraph user create` on the same machine act through it. */
export const OPERATOR_TOKEN_PREFIX = "tgo_"
export const newOperatorToken = () => `${OPERATOR_TOKEN_PREFIX}${randomPart()}`
/** The header the operator token travels in. */
export const OPERATOR_TOKEN_HEADER = "x-talkgraph-operator"
