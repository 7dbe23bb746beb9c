/**
 * Why an audio clip cannot be used, in words for the person who uploaded it. `reason` is a stable
 * code (it becomes the 422 `type`).
 */
export class AudioRejected extends Error {
  readonly reason: string
  constructor(reason: string, message: string) {
    super(message)
    this.reason = reason
  }
}
