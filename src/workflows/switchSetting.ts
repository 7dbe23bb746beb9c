/** A problem with a workflow configuration, at its path under `workflow_configurations`. */
export interface ConfigurationProblem {
  readonly path: Array<string | number>
  readonly message: string
  readonly type: string
}

/**
 * An on/off workflow configuration (`do_not_call_tool`, `publish_requires_tests`): absent or null
 * is off, only `true` is on, anything but a boolean is refused when saved.
 */
export const switchSetting = (key: string) => ({
  isOn: (configurations: Readonly<Record<string, unknown>> | null | undefined): boolean =>
    configurations?.[key] === true,
  problems: (configurations: Readonly<Record<string, unknown>> | null | undefined): Array<ConfigurationProblem> => {
    const raw = configurations?.[key]
    return raw === undefined || raw === null || typeof raw === "boolean"
      ? []
      : [{ path: [key], message: "must be true or false", type: "value_error" }]
  }
})
