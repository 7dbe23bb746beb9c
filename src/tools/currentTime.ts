/** The current_time tool's answer: the instant in a time zone, as the model can read it. */
export const timeIn = (epochMillis: number, timeZone: string) => {
  const date = new Date(epochMillis)
  const local = new Intl.DateTimeFormat("en-US", {
    timeZone,
    weekday: "long",
    year: "numeric",
    month: "long",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hour12: false,
    timeZoneName: "short"
  }).format(date)
  return { timezone: timeZone, local_time: local, utc: date.toISOString() }
}

export const CURRENT_TIME_PARAMETERS = {
  type: "object",
  properties: {
    timezone: {
      type: "string",
      description: "An IANA time zone such as Europe/Paris or America/New_York; the tool's own zone when omitted."
    }
  },
  additionalProperties: false
} as const
