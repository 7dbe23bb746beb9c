import type { Schemas } from "../api/client.ts"
import { weekdays } from "./campaignDefaults.ts"

type Slot = Schemas["ScheduleSlot"]

export interface ScheduleForm {
  readonly enabled: boolean
  readonly timezone: string
  readonly slots: ReadonlyArray<Slot>
}

const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : []

/** The calling windows: days and hours in one time zone; without them the campaign calls at any time. */
export const ScheduleFields = (
  { value, onChange, problems }: {
    readonly value: ScheduleForm
    readonly onChange: (next: ScheduleForm) => void
    readonly problems: Readonly<Record<string, string>>
  }
) => {
  const setSlot = (index: number, patch: Partial<Slot>) =>
    onChange({ ...value, slots: value.slots.map((slot, at) => (at === index ? { ...slot, ...patch } : slot)) })
  return (
    <fieldset>
      <legend>Schedule</legend>
      <label className="inline">
        <input
          type="checkbox"
          checked={value.enabled}
          onChange={(e) => onChange({ ...value, enabled: e.target.checked })}
        />
        Call only within these hours (otherwise at any time)
      </label>
      {value.enabled && (
        <>
          <label>
            Time zone
            <input
              list="time-zones"
              value={value.timezone}
              onChange={(e) => onChange({ ...value, timezone: e.target.value })}
              aria-invalid={problems["schedule_config.timezone"] ? true : undefined}
            />
            <datalist id="time-zones">
              {zones.map((zone) => <option key={zone} value={zone} />)}
            </datalist>
            {problems["schedule_config.timezone"] && (
              <span className="field-problem">{problems["schedule_config.timezone"]}</span>
            )}
          </label>
          <ol className="slots">
            {value.slots.map((slot, index) => {
              const problem = problems[`schedule_config.slots.${index}`] ??
                problems[`schedule_config.slots.${index}.start_time`] ??
                problems[`schedule_config.slots.${index}.end_time`]
              return (
                <li key={index} className="filters">
                  <label>
                    Day
                    <select
                      value={slot.day_of_week}
                      onChange={(e) => setSlot(index, { day_of_week: Number(e.target.value) })}
                    >
                      {weekdays.map((day, number) => <option key={day} value={number}>{day}</option>)}
                    </select>
                  </label>
                  <label>
                    From
                    <input
                      type="time"
                      value={slot.start_time}
                      onChange={(e) => setSlot(index, { start_time: e.target.value })}
                    />
                  </label>
                  <label>
                    To
                    <input
                      type="time"
                      value={slot.end_time}
                      onChange={(e) => setSlot(index, { end_time: e.target.value })}
                    />
                  </label>
                  <button
                    type="button"
                    className="secondary"
                    aria-label={`Remove ${weekdays[slot.day_of_week]} ${slot.start_time}–${slot.end_time}`}
                    onClick={() => onChange({ ...value, slots: value.slots.filter((_, at) => at !== index) })}
                  >
                    Remove
                  </button>
                  {problem && <span className="field-problem">{problem}</span>}
                </li>
              )
            })}
          </ol>
          <button
            type="button"
            className="secondary"
            onClick={() =>
              onChange({
                ...value,
                slots: [...value.slots, { day_of_week: 0, start_time: "09:00", end_time: "17:00" }]
              })}
          >
            Add a time slot
          </button>
          {problems["schedule_config"] && <p className="field-problem">{problems["schedule_config"]}</p>}
        </>
      )}
    </fieldset>
  )
}
